import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { Loaded, Problem, formatTime, useLoaded } from '../ui.js';

type Approval = Awaited<ReturnType<HangarClient['runs']['listApprovals']>>[number];
type InputRequest = Awaited<ReturnType<HangarClient['workflows']['listRequests']>>[number];

/**
 * What a run waits on a person for: tool calls to approve or deny and, for a workflow run, the
 * questions of its input steps. Nothing shows while nothing is pending. `changes` counts the
 * run's approval and request events, so a new one appears and a decided one leaves on its own.
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
  const [error, setError] = useState<unknown>();
  const decide = async (send: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await send();
      pending.reload();
    } catch (failure) {
      setError(failure);
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
                onDecide={(approved, comment) =>
                  decide(() => client.runs.decideApproval(runId, approval.id, { approved, ...(comment && { comment }) }))
                }
              />
            ))}
            {requests.map((request) => (
              <RequestCard
                key={request.id}
                request={request}
                onAnswer={(answer) => decide(() => client.workflows.answerRequest(runId, request.id, { answer }))}
              />
            ))}
          </section>
        )
      }
    </Loaded>
  );
}

function ApprovalCard({ approval, onDecide }: { approval: Approval; onDecide: (approved: boolean, comment: string) => void }) {
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
        <button onClick={() => onDecide(true, comment)}>Approve</button>
        <button class="danger" onClick={() => onDecide(false, comment)}>
          Deny
        </button>
      </div>
    </div>
  );
}

function RequestCard({ request, onAnswer }: { request: InputRequest; onAnswer: (answer: string) => void }) {
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
        <button type="submit">Answer</button>
      </div>
    </form>
  );
}
