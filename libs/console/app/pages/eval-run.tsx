import type { HangarClient } from '@hangar/client';
import { useEffect, useState } from 'preact/hooks';
import { href } from '../router.js';
import { Empty, Loaded, Problem, Status, Table, formatDuration, formatTime, useLoaded, useRecheck, type Column } from '../ui.js';

type SuiteRun = Awaited<ReturnType<HangarClient['evaluations']['getEvalRun']>>;
type CaseResult = SuiteRun['results'][number];

/** How often an unfinished suite run is read again: its cases end one by one, with no stream to follow. */
const RECHECK_MS = 3000;
const UNFINISHED = new Set(['Queued', 'Running']);

const percent = (ratio: number) => `${Math.round(ratio * 100)} %`;
const amount = (cost: number | null) => (cost === null ? '—' : cost.toFixed(cost < 0.01 ? 6 : 4));

const RESULT_COLUMNS: Column<CaseResult>[] = [
  { label: 'Case', value: (result) => result.caseId },
  { label: 'Status', value: (result) => <Status status={result.status} /> },
  { label: 'Score', value: (result) => result.score.toFixed(2) },
  {
    label: 'Graders',
    value: (result) =>
      result.graders.map((grader) => (
        <div>
          {`${grader.kind}: ${grader.passed ? 'passed' : 'failed'} (${grader.score.toFixed(2)})`}
          {grader.detail && <span class="muted"> {grader.detail}</span>}
        </div>
      )),
  },
  { label: 'Input', value: (result) => result.input },
  { label: 'Expected', value: (result) => result.expected ?? '—' },
  { label: 'Output', value: (result) => result.error ?? result.output },
  { label: 'Latency', value: (result) => formatDuration(result.latencyMs) },
  { label: 'Cost', value: (result) => amount(result.cost) },
  { label: 'Run', value: (result) => (result.runId ? <a href={href('runs', result.runId)}>{result.runId}</a> : '—') },
];

/** One suite run: its summary as the cases end, a cancel while it is unfinished, and each case's result with its run. */
export function EvalRunPage({ client, suiteRunId }: { client: HangarClient; suiteRunId: string }) {
  const suiteRun = useLoaded(() => client.evaluations.getEvalRun(suiteRunId), [client, suiteRunId]);
  // The last status read: a recheck that failed (a gateway restarting) does not stop the rechecks.
  const [lastStatus, setLastStatus] = useState<string>();
  useEffect(() => void (suiteRun.value && setLastStatus(suiteRun.value.status)), [suiteRun.value]);
  const unfinished = lastStatus !== undefined && UNFINISHED.has(lastStatus);
  useRecheck(unfinished, suiteRun.reload, RECHECK_MS);
  const [cancelError, setCancelError] = useState<unknown>();
  const [canceling, setCanceling] = useState(false);
  const cancel = async () => {
    setCancelError(undefined);
    setCanceling(true);
    try {
      await client.evaluations.cancelEvalRun(suiteRunId);
      suiteRun.reload();
    } catch (error) {
      setCancelError(error);
    } finally {
      setCanceling(false);
    }
  };
  return (
    <section>
      <Loaded state={suiteRun} what="the suite run">
        {(run) => (
          <>
            <p>
              <a href={href('manage', 'evals', run.suite)}>← Eval suite {run.suite}</a>
            </p>
            <h1>Suite run {run.id}</h1>
            <dl class="facts">
              <dt>Suite</dt>
              <dd>
                {run.suite} v{run.suiteVersion}
              </dd>
              <dt>Agent</dt>
              <dd>
                <a href={href('agents', run.agentName)}>{run.agentName}</a>
                {run.agentVersion !== null && ` v${run.agentVersion}`}
              </dd>
              <dt>Status</dt>
              <dd>
                <Status status={run.status} /> {run.error && <span class="muted">{run.error}</span>}
              </dd>
              <dt>Cases</dt>
              <dd>
                {run.casesDone} of {run.summary.cases} done: {run.summary.passed} passed, {run.summary.failed} failed ({run.summary.errored}{' '}
                errored)
              </dd>
              <dt>Pass rate</dt>
              <dd>{percent(run.summary.passRate)}</dd>
              <dt>Mean score</dt>
              <dd>{run.summary.meanScore.toFixed(2)}</dd>
              <dt>Cost</dt>
              <dd>
                {amount(run.summary.cost)} (judges {amount(run.summary.judgeCost)})
              </dd>
              <dt>Tokens</dt>
              <dd>
                {run.summary.inputTokens} in, {run.summary.outputTokens} out
              </dd>
              <dt>Latency</dt>
              <dd>
                p50 {formatDuration(run.summary.latencyMsP50)}, p95 {formatDuration(run.summary.latencyMsP95)}
              </dd>
              <dt>Started</dt>
              <dd>{formatTime(run.startedAt)}</dd>
              <dt>Completed</dt>
              <dd>{formatTime(run.completedAt)}</dd>
            </dl>
            {UNFINISHED.has(run.status) && (
              <button class="danger" disabled={canceling} onClick={cancel}>
                Cancel suite run
              </button>
            )}
            {cancelError !== undefined && <Problem error={cancelError} />}
            <h2>Case results</h2>
            {run.results.length === 0 ? (
              <Empty>No case has ended yet.</Empty>
            ) : (
              <Table label="Case results" columns={RESULT_COLUMNS} rows={run.results} rowKey={(result) => result.caseId} />
            )}
          </>
        )}
      </Loaded>
    </section>
  );
}
