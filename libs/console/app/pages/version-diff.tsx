import type { HangarClient } from '@hangar/client';
import { diffLines } from '../diff.js';
import { Loaded, useLoaded } from '../ui.js';

/** What a stored version says, without what every version differs in (its number, time and author). */
const comparable = ({ version, createdAt, createdBy, ...definition }: Record<string, unknown>) => JSON.stringify(definition, null, 2);

/** Two versions of an agent side by side, changed lines marked. */
export function VersionDiff({ client, name, versions }: { client: HangarClient; name: string; versions: [number, number] }) {
  const [older, newer] = [...versions].sort((a, b) => a - b);
  const diff = useLoaded(() => client.agents.diffVersions(name, String(older), String(newer)), [client, name, older, newer]);
  return (
    <Loaded state={diff} what="the two versions">
      {({ left, right }) => {
        const rows = diffLines(comparable(left), comparable(right));
        const changed = rows.filter((row) => row.kind !== 'same').length;
        return (
          <div class="card">
            <h3>
              Version {older} → {newer}: {changed === 0 ? 'no difference' : `${changed} line${changed === 1 ? '' : 's'} changed`}
            </h3>
            <table class="diff" aria-label={`Differences between version ${older} and ${newer}`}>
              <thead>
                <tr>
                  <th>Version {older}</th>
                  <th>Version {newer}</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row) => (
                  <tr class={row.kind}>
                    <td>
                      <pre>{row.kind === 'added' ? '' : row.left}</pre>
                    </td>
                    <td>
                      <pre>{row.kind === 'removed' ? '' : row.right}</pre>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      }}
    </Loaded>
  );
}
