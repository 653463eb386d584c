import { HangarProblemError, type HangarClient, type RunEvent } from '@hangar/client';
import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../api.js';
import { href } from '../router.js';
import { Loaded, Problem, Status, formatCost, formatDuration, formatTime, useLoaded } from '../ui.js';
import { RunDecisions } from './run-decisions.js';
import { RunFeedback } from './run-feedback.js';
import { RunTreeGraph } from './run-tree-graph.js';

const ENDED = new Set(['Completed', 'Failed', 'Canceled']);
/** The latest events listed; a long run's earlier ones are counted, not drawn. */
const SHOWN_EVENTS = 1000;
/** Run events after which what the run waits on a person for has changed (RunDecisions also polls: not every decision is one). */
const DECISION_EVENTS = new Set(['approval.requested', 'approval.decided', 'workflow.input.requested', 'workflow.resumed']);

/** One run: its record, its tree of child runs, and its events live from the stored log. */
export function RunPage({ client, runId }: { client: HangarClient; runId: string }) {
  const run = useLoaded(() => client.runs.get(runId), [client, runId]);
  const tree = useLoaded(() => client.runs.getTree(runId), [client, runId]);
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [eventsError, setEventsError] = useState<unknown>();
  const [cancelError, setCancelError] = useState<unknown>();
  const [decisionChanges, setDecisionChanges] = useState(0);

  useEffect(() => {
    const abort = new AbortController();
    setEvents([]);
    setEventsError(undefined);
    // Events that came since the last frame are added together: a run of thousands of deltas
    // replays its history in a burst, which one render per event would crawl through.
    let arrived: RunEvent[] = [];
    let frame: number | undefined;
    const show = () => {
      frame = undefined;
      const batch = arrived;
      arrived = [];
      setEvents((seen) => [...seen, ...batch]);
    };
    abort.signal.addEventListener('abort', () => frame !== undefined && cancelAnimationFrame(frame));
    (async () => {
      try {
        for await (const event of client.runs.events(runId, { signal: abort.signal })) {
          arrived.push(event);
          frame ??= requestAnimationFrame(show);
          if (DECISION_EVENTS.has(event.type)) setDecisionChanges((count) => count + 1);
          // The record and the tree as they are once the run ended.
          if (event.type.startsWith('run.') && event.type !== 'run.started') {
            run.reload();
            tree.reload();
          }
        }
      } catch (error) {
        if (!abort.signal.aborted) setEventsError(error);
      }
    })();
    return () => abort.abort();
  }, [client, runId]);

  const cancel = async () => {
    setCancelError(undefined);
    try {
      await client.runs.cancel(runId);
    } catch (error) {
      setCancelError(error);
    }
  };

  return (
    <section>
      <p>
        <a href={href('runs')}>← Runs</a>
      </p>
      <h1>Run {runId}</h1>
      <Loaded state={run} what="the run">
        {(record) => (
          <>
            <dl class="facts">
              <dt>{record.kind === 'Workflow' ? 'Workflow' : 'Agent'}</dt>
              <dd>
                <a href={record.kind === 'Workflow' ? href('manage', 'workflows', record.agentName) : href('agents', record.agentName)}>
                  {record.agentName}
                </a>
                {record.agentVersion !== null && ` v${record.agentVersion}`}
              </dd>
              <dt>Status</dt>
              <dd>
                <Status status={record.status} />{' '}
                {record.errorType && <span class="muted">{`${record.errorType}: ${record.errorMessage ?? ''}`}</span>}
              </dd>
              <dt>Model</dt>
              <dd>{record.modelProvider ? `${record.modelProvider}/${record.model}` : '—'}</dd>
              <dt>Tokens</dt>
              <dd>
                {record.usage.totalTokens} ({record.usage.inputTokens} in, {record.usage.outputTokens} out)
              </dd>
              <dt>Cost</dt>
              <dd>{formatCost(record.cost)}</dd>
              <dt>Started</dt>
              <dd>{formatTime(record.startedAt)}</dd>
              <dt>Duration</dt>
              <dd>{formatDuration(record.durationMs)}</dd>
              {record.parentRunId && (
                <>
                  <dt>Parent</dt>
                  <dd>
                    <a href={href('runs', record.parentRunId)}>{record.parentRunId}</a>
                  </dd>
                </>
              )}
            </dl>
            {!ENDED.has(record.status) && (
              <button class="danger" onClick={cancel}>
                Cancel run
              </button>
            )}
            {cancelError !== undefined && <Problem error={cancelError} />}
            {!ENDED.has(record.status) && (
              <RunDecisions client={client} runId={runId} isWorkflow={record.kind === 'Workflow'} changes={decisionChanges} />
            )}
          </>
        )}
      </Loaded>
      <h2>Tree</h2>
      <Loaded state={tree} what="the tree">
        {(runs) => <RunTreeGraph nodes={runs} currentRunId={runId} />}
      </Loaded>
      <h2>Input</h2>
      <RunInput client={client} runId={runId} />
      <h2>Scores</h2>
      <RunFeedback client={client} runId={runId} />
      <h2>Events</h2>
      {eventsError !== undefined && <p class="problem">{describeError(eventsError)}</p>}
      {events.length > SHOWN_EVENTS && (
        <p class="muted">
          The first {events.length - SHOWN_EVENTS} of {events.length} events are not shown here; GET /api/runs/{runId}/events has them all.
        </p>
      )}
      <ol class="events" aria-label="Run events">
        {events.slice(-SHOWN_EVENTS).map((event) => (
          <li key={event.seq}>
            <span class="seq">{event.seq}</span> <code>{event.type}</code> <span class="muted">{formatTime(event.at)}</span>
            {Object.keys(event.data).length > 0 && <pre class="data">{JSON.stringify(event.data)}</pre>}
          </li>
        ))}
      </ol>
    </section>
  );
}

/** The input as the run received it; a 404 means it was not recorded (RunRecording:RecordRunInput off, or retention). */
function RunInput({ client, runId }: { client: HangarClient; runId: string }) {
  const input = useLoaded(
    () =>
      client.runs.getInput(runId).catch((error: unknown) => {
        if (error instanceof HangarProblemError && error.status === 404) return null;
        throw error;
      }),
    [client, runId],
  );
  return (
    <Loaded state={input} what="the input">
      {(recorded) =>
        recorded === null ? (
          <p class="muted">No input is recorded for this run.</p>
        ) : (
          <pre class="block" data-testid="run-input">
            {JSON.stringify(recorded.input, null, 2)}
          </pre>
        )
      }
    </Loaded>
  );
}
