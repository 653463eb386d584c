import type { HangarClient } from '@hangar/client';
import { href } from '../router.js';
import { useState } from 'preact/hooks';
import { Empty, Loaded, Problem, formatTime, useLoaded } from '../ui.js';
import { VersionDiff } from './version-diff.js';

/** One agent: its definition, and for a stored one its versions. */
export function AgentPage({ client, name }: { client: HangarClient; name: string }) {
  const agent = useLoaded(() => client.agents.get(name), [client, name]);
  return (
    <section>
      <p>
        <a href={href('agents')}>← Agents</a>
      </p>
      <h1>{name}</h1>
      <Loaded state={agent} what="the agent">
        {(detail) => (
          <>
            <p>
              <span class="tag">{detail.origin}</span>{' '}
              <a class="button" href={href('playground', name)}>
                Run in the playground
              </a>
            </p>
            {detail.definition ? (
              <>
                <dl class="facts">
                  <dt>Model</dt>
                  <dd>
                    {detail.definition.model.provider}/{detail.definition.model.model}
                    {(detail.definition.model.fallbacks ?? []).map((fallback) => ` → ${fallback.provider}/${fallback.model}`).join('')}
                  </dd>
                  <dt>Tools</dt>
                  <dd>{detail.definition.tools?.join(', ') || '—'}</dd>
                  <dt>Callable agents</dt>
                  <dd>{detail.definition.agents?.join(', ') || '—'}</dd>
                </dl>
                <h2>Instructions</h2>
                <pre class="block">{detail.definition.instructions || '—'}</pre>
              </>
            ) : (
              <Empty>Defined in code; its definition is not shown here.</Empty>
            )}
            {detail.origin === 'Database' && <Versions client={client} name={name} onRolledBack={agent.reload} />}
          </>
        )}
      </Loaded>
    </section>
  );
}

function Versions({ client, name, onRolledBack }: { client: HangarClient; name: string; onRolledBack: () => void }) {
  const versions = useLoaded(() => client.agents.listVersions(name), [client, name]);
  const [chosen, setChosen] = useState<number[]>([]);
  const [error, setError] = useState<unknown>();
  const toggle = (version: number) =>
    setChosen((now) => (now.includes(version) ? now.filter((each) => each !== version) : [...now, version].slice(-2)));
  const rollBack = async (version: number) => {
    setError(undefined);
    try {
      await client.agents.rollback(name, { version });
      versions.reload();
      onRolledBack();
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <>
      <h2>Versions</h2>
      <p class="muted">Choose two versions to compare them side by side.</p>
      {error !== undefined && <Problem error={error} />}
      <Loaded state={versions} what="versions">
        {(list) => {
          const newest = Math.max(...list.map((version) => version.version));
          return (
            <table>
              <thead>
                <tr>
                  <th>Compare</th>
                  <th>Version</th>
                  <th>Model</th>
                  <th>Saved</th>
                  <th>By</th>
                  <th class="actions" />
                </tr>
              </thead>
              <tbody>
                {[...list]
                  .sort((a, b) => b.version - a.version)
                  .map((version) => (
                    <tr key={version.version}>
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Compare version ${version.version}`}
                          checked={chosen.includes(version.version)}
                          onChange={() => toggle(version.version)}
                        />
                      </td>
                      <td>{version.version}</td>
                      <td>
                        {version.model.provider}/{version.model.model}
                      </td>
                      <td>{formatTime(version.createdAt)}</td>
                      <td>{version.createdBy}</td>
                      <td class="actions">
                        {version.version !== newest && (
                          <button class="quiet" onClick={() => rollBack(version.version)}>
                            Roll back to {version.version}
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
              </tbody>
            </table>
          );
        }}
      </Loaded>
      {chosen.length === 2 && <VersionDiff client={client} name={name} versions={[chosen[0], chosen[1]]} />}
    </>
  );
}
