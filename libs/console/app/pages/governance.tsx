import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { Empty, Loaded, formatTime, useLoaded, Pager, pageQuery } from '../ui.js';

/** The tenant's quota rules, each with how much of its window is used. */
export function QuotasPage({ client }: { client: HangarClient }) {
  const rules = useLoaded(() => client.quotas.listRules(), [client]);
  return (
    <section>
      <h1>Quotas</h1>
      <Loaded state={rules} what="quota rules">
        {(list) =>
          list.length === 0 ? (
            <Empty>No quota rule: runs of this tenant are not limited.</Empty>
          ) : (
            <ul class="quotas">
              {list.map((rule) => {
                const share = rule.limit > 0 ? Math.min(1, rule.used / rule.limit) : 1;
                return (
                  <li key={rule.name}>
                    <div class="row">
                      <strong>{rule.name}</strong>
                      <span class="muted">
                        {rule.metric} per {rule.period.toLowerCase()}
                        {rule.agentName ? ` of ${rule.agentName}` : ''}, resets {formatTime(rule.resetsAt)}
                      </span>
                    </div>
                    <meter
                      min={0}
                      max={rule.limit}
                      value={Math.min(rule.used, rule.limit)}
                      aria-label={`${rule.name}: ${rule.used} of ${rule.limit}`}
                    />
                    <span class={share >= 1 ? 'problem' : 'muted'}>
                      {rule.used} of {rule.limit} ({Math.round(share * 100)}%)
                    </span>
                  </li>
                );
              })}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

/** The audit trail, newest first, filtered by action. */
export function AuditPage({ client }: { client: HangarClient }) {
  const [action, setAction] = useState('');
  const [page, setPage] = useState(0);
  const entries = useLoaded(
    () =>
      client.audit.listEntries({
        query: { ...(action.trim() && { action: action.trim() }), ...pageQuery(page) },
      }),
    [client, action, page],
  );
  return (
    <section>
      <h1>Audit trail</h1>
      <form class="row filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Action
          <input
            name="action"
            placeholder="agent.created"
            value={action}
            onChange={(event) => (setPage(0), setAction(event.currentTarget.value))}
          />
        </label>
      </form>
      <Loaded state={entries} what="the audit trail">
        {(list) =>
          list.length === 0 ? (
            <Empty>Nothing recorded{action ? ` for ${action}` : ''}.</Empty>
          ) : (
            <>
              <table>
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Action</th>
                    <th>Resource</th>
                    <th>Actor</th>
                    <th>Details</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((entry) => (
                    <tr key={entry.id}>
                      <td>{formatTime(entry.createdAt)}</td>
                      <td>
                        <code>{entry.action}</code>
                      </td>
                      <td>
                        {entry.resourceType} {entry.resourceId}
                      </td>
                      <td>{entry.actor}</td>
                      <td>
                        <code class="small">{JSON.stringify(entry.details)}</code>
                      </td>
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
