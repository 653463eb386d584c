import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { Loaded, Problem, formatTime, useLoaded, useRecheck } from '../ui.js';

type Approval = Awaited<ReturnType<HangarClient['runs']['listApprovals']>>[number];
type InputRequest = Awaited<ReturnType<HangarClient['workflows']['listRequests']>>[number];

/** How often what is pending is read again while something is: a decision made elsewhere is not always a run event. */
const RECHECK_MS = 3000;

/**
 * What a run waits on a person for: tool calls to approve or deny and, for a workflow run, the
 * questions of its input steps. Nothing shows while nothing is pending. `changes` counts the
 * run's approval and workflow events, so a new one appears at once; while something is pending
 * it is read again every few seconds, so one decided elsewhere leaves.
 */
export function RunDecisions({
  client,
  runId,
  isWorkflow,
  changes,
}: {
  client: HangarClient;
  runId: string;
  isWorkflow: boolean;
  changes: number;
}) {
  const pending = useLoaded(async () => {
    const [approvals, requests] = await Promise.all([
      client.runs.listApprovals(runId),
      isWorkflow ? client.workflows.listRequests(runId) : Promise.resolve([] as InputRequest[]),
    ]);
    return {
      approvals: approvals.filter((approval) => approval.status === 'Pending'),
      requests: requests.filter((request) => request.status === 'Pending'),
    };
  }, [client, runId, isWorkflow, changes]);
  const waiting = (pending.value?.approvals.length ?? 0) + (pending.value?.requests.length ?? 0) > 0;
  useRecheck(waiting, pending.reload, RECHECK_MS);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const decide = async (send: () => Promise<unknown>) => {
    setError(undefined);
    setBusy(true);
    try {
      await send();
      pending.reload();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Loaded state={pending} what="what the run waits for">
      {({ approvals, requests }) =>
        approvals.length + requests.length === 0 ? null : (
          <section aria-label="Waiting for a person">
            <h2>Waiting for a person</h2>
            {error !== undefined && <Problem error={error} />}
            {approvals.map((approval) => (
              <ApprovalCard
                key={approval.id}
                approval={approval}
                busy={busy}
                onDecide={(approved, comment) =>
                  decide(() => client.runs.decideApproval(runId, approval.id, { approved, ...(comment && { comment }) }))
                }
              />
            ))}
            {requests.map((request) => (
              <RequestCard
                key={request.id}
                request={request}
                busy={busy}
                onAnswer={(answer) => decide(() => client.workflows.answerRequest(runId, request.id, { answer }))}
              />
            ))}
          </section>
        )
      }
    </Loaded>
  );
}

function ApprovalCard({
  approval,
  busy,
  onDecide,
}: {
  approval: Approval;
  busy: boolean;
  onDecide: (approved: boolean, comment: string) => void;
}) {
  const [comment, setComment] = useState('');
  return (
    <div class="card" aria-label={`Approval of ${approval.toolName}`}>
      <p>
        The tool <code>{approval.toolName}</code> waits for a decision until {formatTime(approval.expiresAt)}, with:
      </p>
      <pre class="block">{JSON.stringify(approval.args, null, 2)}</pre>
      <label>
        Comment
        <input value={comment} onInput={(event) => setComment(event.currentTarget.value)} />
      </label>
      <div class="row">
        <button disabled={busy} onClick={() => onDecide(true, comment)}>
          Approve
        </button>
        <button class="danger" disabled={busy} onClick={() => onDecide(false, comment)}>
          Deny
        </button>
      </div>
    </div>
  );
}

function RequestCard({ request, busy, onAnswer }: { request: InputRequest; busy: boolean; onAnswer: (answer: string) => void }) {
  const [answer, setAnswer] = useState('');
  const submit = (event: Event) => {
    event.preventDefault();
    onAnswer(answer);
  };
  return (
    <form class="card" onSubmit={submit} aria-label={`Question of step ${request.stepId}`}>
      <p>
        Step <code>{request.stepId}</code> asks: {request.prompt}
      </p>
      <label>
        Answer
        <textarea rows={3} value={answer} required onInput={(event) => setAnswer(event.currentTarget.value)} />
      </label>
      <div class="row">
        <button type="submit" disabled={busy}>
          Answer
        </button>
      </div>
    </form>
  );
}
