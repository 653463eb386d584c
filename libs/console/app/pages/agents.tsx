import type { HangarClient } from '@hangar/client';
import { useState } from 'preact/hooks';
import { href, navigate } from '../router.js';
import { DraftDefinition } from './draft.js';
import { Empty, Loaded, Problem, formatTime, useLoaded } from '../ui.js';

/** The tenant's agents (stored and code-defined), and a form for a new one. */
export function AgentsPage({ client }: { client: HangarClient }) {
  const agents = useLoaded(() => client.agents.list(), [client]);
  return (
    <section>
      <h1>Agents</h1>
      <Loaded state={agents} what="agents">
        {(list) =>
          list.length === 0 ? (
            <Empty>No agent yet: create the first one below.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Origin</th>
                  <th>Model</th>
                  <th>Version</th>
                  <th>Updated</th>
                </tr>
              </thead>
              <tbody>
                {list.map((agent) => (
                  <tr key={agent.name}>
                    <td>
                      <a href={href('agents', agent.name)}>{agent.name}</a>
                      {agent.description && <div class="muted">{agent.description}</div>}
                    </td>
                    <td>{agent.origin}</td>
                    <td>{agent.model ? `${agent.model.provider}/${agent.model.model}` : '—'}</td>
                    <td>{agent.version ?? '—'}</td>
                    <td>{formatTime(agent.updatedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loaded>
      <NewAgent client={client} />
      <DraftDefinition client={client} />
    </section>
  );
}

function NewAgent({ client }: { client: HangarClient }) {
  const [fields, setFields] = useState({ name: '', provider: '', model: '', instructions: '' });
  const [error, setError] = useState<unknown>();
  const [saving, setSaving] = useState(false);
  const set = (field: keyof typeof fields) => (event: Event) =>
    setFields({ ...fields, [field]: (event.currentTarget as HTMLInputElement).value });
  const submit = async (event: Event) => {
    event.preventDefault();
    setSaving(true);
    setError(undefined);
    try {
      const created = await client.agents.create({
        name: fields.name.trim(),
        instructions: fields.instructions || null,
        model: { provider: fields.provider.trim(), model: fields.model.trim() },
      });
      navigate('agents', created.name);
    } catch (caught) {
      setError(caught);
    } finally {
      setSaving(false);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="new-agent">
      <h2 id="new-agent">New agent</h2>
      <div class="row">
        <label>
          Name
          <input name="name" required value={fields.name} onInput={set('name')} />
        </label>
        <label>
          Provider
          <input name="provider" required value={fields.provider} onInput={set('provider')} />
        </label>
        <label>
          Model
          <input name="model" required value={fields.model} onInput={set('model')} />
        </label>
      </div>
      <label>
        Instructions
        <textarea name="instructions" rows={3} value={fields.instructions} onInput={set('instructions')} />
      </label>
      <button type="submit" disabled={saving}>
        {saving ? 'Creating…' : 'Create agent'}
      </button>
      {error !== undefined && <Problem error={error} />}
    </form>
  );
}
