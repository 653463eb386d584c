import type { HangarClient, RunStreamFrame } from '@hangar/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { href, navigate } from '../router.js';
import { Problem, Status, formatCost, useLoaded } from '../ui.js';

type Step =
  | { kind: 'tool-call'; id: string; toolName: string; args: unknown; result?: unknown }
  | { kind: 'child-run'; runId: string; agentName: string }
  | { kind: 'approval'; runId: string; id: string; toolName: string; args: unknown; decided?: boolean };

interface Streamed {
  runId?: string;
  text: string;
  steps: Step[];
  done?: Extract<RunStreamFrame, { event: 'done' }>['data'];
  failure?: Extract<RunStreamFrame, { event: 'error' }>['data'];
}

/** Runs an agent with a message and shows its stream as it comes: text, tool calls, child runs, approvals. */
export function PlaygroundPage({ client, agentName }: { client: HangarClient; agentName?: string }) {
  const agents = useLoaded(() => client.agents.list(), [client]);
  const [message, setMessage] = useState('');
  const [sessionId, setSessionId] = useState('');
  const [streamed, setStreamed] = useState<Streamed>();
  const [error, setError] = useState<unknown>();
  const running = useRef<AbortController | undefined>(undefined);
  const [isRunning, setRunning] = useState(false);
  useEffect(() => () => running.current?.abort(), []);

  const run = async (event: Event) => {
    event.preventDefault();
    if (!agentName) return;
    const abort = new AbortController();
    running.current = abort;
    setRunning(true);
    setError(undefined);
    let state: Streamed = { text: '', steps: [] };
    setStreamed(state);
    const update = (next: Partial<Streamed>) => setStreamed((state = { ...state, ...next }));
    try {
      for await (const frame of client.agents.run(
        agentName,
        { message, ...(sessionId.trim() && { sessionId: sessionId.trim() }) },
        { signal: abort.signal },
      )) {
        if (frame.event === 'run') update({ runId: frame.data.runId });
        else if (frame.event === 'update') {
          const data = frame.data;
          if (data.type === 'text-delta') update({ text: state.text + data.text });
          else if (data.type === 'tool-call')
            update({ steps: [...state.steps, { kind: 'tool-call', id: data.toolCallId, toolName: data.toolName, args: data.args }] });
          else if (data.type === 'tool-result')
            update({
              steps: state.steps.map((step) =>
                step.kind === 'tool-call' && step.id === data.toolCallId ? { ...step, result: data.result } : step,
              ),
            });
          else if (data.type === 'child-run')
            update({ steps: [...state.steps, { kind: 'child-run', runId: data.runId, agentName: data.agentName }] });
        } else if (frame.event === 'approvals')
          update({
            steps: [
              ...state.steps,
              ...frame.data.approvals.map((approval) => ({ kind: 'approval' as const, runId: state.runId ?? '', ...approval })),
            ],
          });
        else if (frame.event === 'done') update({ done: frame.data });
        else if (frame.event === 'error') update({ failure: frame.data });
      }
    } catch (caught) {
      if (!abort.signal.aborted) setError(caught);
    } finally {
      running.current = undefined;
      setRunning(false);
    }
  };

  const decide = async (step: Extract<Step, { kind: 'approval' }>, approved: boolean) => {
    try {
      await client.runs.decideApproval(step.runId, step.id, { approved });
      setStreamed(
        (state) => state && { ...state, steps: state.steps.map((each) => (each === step ? { ...step, decided: approved } : each)) },
      );
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <section>
      <h1>Playground</h1>
      <form class="card" onSubmit={run}>
        {/* The select is there from the first paint, so the list arriving never moves the form below it. */}
        <label>
          Agent
          <select
            name="agent"
            value={agentName ?? ''}
            aria-busy={agents.loading}
            onChange={(event) => navigate('playground', event.currentTarget.value)}
          >
            <option value="" disabled>
              {agents.value ? 'Choose an agent' : 'Loading agents…'}
            </option>
            {(agents.value ?? (agentName ? [{ name: agentName }] : [])).map((agent) => (
              <option value={agent.name}>{agent.name}</option>
            ))}
          </select>
        </label>
        {agents.error !== undefined && <Problem error={agents.error} />}
        <label>
          Session <span class="muted">(optional: a new id starts one, an existing one continues it)</span>
          <input name="sessionId" value={sessionId} onInput={(event) => setSessionId(event.currentTarget.value)} />
        </label>
        <label>
          Message
          <textarea name="message" rows={3} required value={message} onInput={(event) => setMessage(event.currentTarget.value)} />
        </label>
        <div class="row">
          <button type="submit" disabled={!agentName || !message.trim() || isRunning}>
            Run
          </button>
          {isRunning && (
            <button type="button" class="quiet" onClick={() => running.current?.abort()}>
              Stop
            </button>
          )}
        </div>
      </form>
      {error !== undefined && <Problem error={error} />}
      {streamed && (
        <div class="card" aria-live="polite">
          {/* Held in place before the id comes, so the answer below it never moves. */}
          <p>Run {streamed.runId ? <a href={href('runs', streamed.runId)}>{streamed.runId}</a> : <span class="muted">starting…</span>}</p>
          <pre class="block answer" data-testid="answer">
            {streamed.text || (streamed.done || streamed.failure ? '' : '…')}
          </pre>
          {streamed.steps.map((step) =>
            step.kind === 'tool-call' ? (
              <p class="step">
                Tool <code>{step.toolName}</code>({JSON.stringify(step.args)}){'result' in step && <> → {JSON.stringify(step.result)}</>}
              </p>
            ) : step.kind === 'child-run' ? (
              <p class="step">
                Child run of <code>{step.agentName}</code>: <a href={href('runs', step.runId)}>{step.runId}</a>
              </p>
            ) : (
              <p class="step">
                Approval for <code>{step.toolName}</code>({JSON.stringify(step.args)}){' '}
                {step.decided === undefined ? (
                  <>
                    <button onClick={() => decide(step, true)}>Approve</button>{' '}
                    <button class="quiet" onClick={() => decide(step, false)}>
                      Deny
                    </button>
                  </>
                ) : step.decided ? (
                  'approved'
                ) : (
                  'denied'
                )}
              </p>
            ),
          )}
          {streamed.done && (
            <p>
              <Status status={streamed.done.status} /> {streamed.done.usage.totalTokens} tokens, {formatCost(streamed.done.cost)}
            </p>
          )}
          {streamed.failure && <p class="problem">{`${streamed.failure.errorType}: ${streamed.failure.message}`}</p>}
        </div>
      )}
    </section>
  );
}
