import type { HangarClient } from '@hangar/client';
import { href } from '../router.js';
import { Empty, Loaded, formatTime, useLoaded } from '../ui.js';

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
            {detail.origin === 'Database' && <Versions client={client} name={name} />}
          </>
        )}
      </Loaded>
    </section>
  );
}

function Versions({ client, name }: { client: HangarClient; name: string }) {
  const versions = useLoaded(() => client.agents.listVersions(name), [client, name]);
  return (
    <>
      <h2>Versions</h2>
      <Loaded state={versions} what="versions">
        {(list) => (
          <table>
            <thead>
              <tr>
                <th>Version</th>
                <th>Model</th>
                <th>Saved</th>
                <th>By</th>
              </tr>
            </thead>
            <tbody>
              {[...list]
                .sort((a, b) => b.version - a.version)
                .map((version) => (
                  <tr key={version.version}>
                    <td>{version.version}</td>
                    <td>
                      {version.model.provider}/{version.model.model}
                    </td>
                    <td>{formatTime(version.createdAt)}</td>
                    <td>{version.createdBy}</td>
                  </tr>
                ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </>
  );
}
