import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { href } from '../router.js';
import { Empty, Loaded, Status, formatCost, formatDuration, formatTime, useLoaded, Pager, pageQuery } from '../ui.js';

const STATUSES = ['Queued', 'Running', 'AwaitingApproval', 'Completed', 'Failed', 'Canceled'] as const;

/** Root runs, newest first, filtered by agent and status, a page at a time. */
export function RunsPage({ client }: { client: HangarClient }) {
  const [agentName, setAgentName] = useState('');
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(0);
  const runs = useLoaded(
    () =>
      client.runs.list({
        query: {
          ...(agentName.trim() && { agentName: agentName.trim() }),
          ...(status && { status: status as (typeof STATUSES)[number] }),
          ...pageQuery(page),
        },
      }),
    [client, agentName, status, page],
  );
  return (
    <section>
      <h1>Runs</h1>
      <form class="row filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Agent
          <input name="agentName" value={agentName} onChange={(event) => (setPage(0), setAgentName(event.currentTarget.value))} />
        </label>
        <label>
          Status
          <select name="status" value={status} onChange={(event) => (setPage(0), setStatus(event.currentTarget.value))}>
            <option value="">Any</option>
            {STATUSES.map((each) => (
              <option value={each}>{each}</option>
            ))}
          </select>
        </label>
        <button type="button" class="quiet" onClick={runs.reload}>
          Refresh
        </button>
      </form>
      <Loaded state={runs} what="runs">
        {(list) =>
          list.length === 0 ? (
            <Empty>No run matches.</Empty>
          ) : (
            <>
              <table>
                <thead>
                  <tr>
                    <th>Started</th>
                    <th>Agent</th>
                    <th>Status</th>
                    <th>Kind</th>
                    <th>Tokens</th>
                    <th>Cost</th>
                    <th>Duration</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((run) => (
                    <tr key={run.id}>
                      <td>
                        <a href={href('runs', run.id)}>{formatTime(run.startedAt)}</a>
                      </td>
                      <td>{run.agentName}</td>
                      <td>
                        <Status status={run.status} />
                      </td>
                      <td>{run.kind}</td>
                      <td>{run.usage.totalTokens}</td>
                      <td>{formatCost(run.cost)}</td>
                      <td>{formatDuration(run.durationMs)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager page={page} shown={list.length} onPage={setPage} />
            </>
          )
        }
      </Loaded>
    </section>
  );
}
