import type { HangarClient } from '@hangar/client';
import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../api.js';
import { navigate } from '../router.js';
import { Problem } from '../ui.js';

const STARTER = JSON.stringify(
  { name: 'my-agent', instructions: 'Be brief.', model: { provider: 'demo', model: 'echo' }, tools: [] },
  null,
  2,
);
/** How long typing pauses before the draft is checked. */
const VALIDATE_AFTER_MS = 300;

type Check =
  | { kind: 'checking' }
  | { kind: 'unreadable'; message: string }
  | { kind: 'checked'; valid: boolean; messages: Array<{ severity: string; code: string; message: string; path: string }> };

/** A whole definition as JSON, checked by the API's validate route as it is typed, and created from there. */
export function DraftDefinition({ client }: { client: HangarClient }) {
  const [text, setText] = useState(STARTER);
  const [check, setCheck] = useState<Check>({ kind: 'checking' });
  const [error, setError] = useState<unknown>();

  useEffect(() => {
    let current = true;
    let draft: unknown;
    try {
      draft = JSON.parse(text);
    } catch (parseError) {
      setCheck({ kind: 'unreadable', message: (parseError as Error).message });
      return;
    }
    setCheck({ kind: 'checking' });
    const timer = setTimeout(() => {
      client.agents.validate(draft as never).then(
        (report) => current && setCheck({ kind: 'checked', valid: report.valid, messages: report.messages }),
        (failure: unknown) => current && setCheck({ kind: 'unreadable', message: describeError(failure) }),
      );
    }, VALIDATE_AFTER_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [client, text]);

  const create = async () => {
    setError(undefined);
    try {
      const created = await client.agents.create(JSON.parse(text));
      navigate('agents', created.name);
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <div class="card" aria-labelledby="draft">
      <h2 id="draft">New agent from a definition</h2>
      <label>
        Definition (JSON)
        <textarea
          name="definition"
          rows={10}
          class="code"
          spellcheck={false}
          value={text}
          onInput={(event) => setText(event.currentTarget.value)}
        />
      </label>
      <div role="status" aria-live="polite" data-testid="draft-check">
        {check.kind === 'checking' && <p class="muted">Checking…</p>}
        {check.kind === 'unreadable' && <p class="problem">Not a definition yet: {check.message}</p>}
        {check.kind === 'checked' && check.valid && check.messages.length === 0 && <p class="ok">Valid.</p>}
        {check.kind === 'checked' && (!check.valid || check.messages.length > 0) && (
          <ul class="checks">
            {check.messages.map((message) => (
              <li class={message.severity === 'Error' ? 'problem' : 'muted'}>
                {message.severity} at <code>{message.path || '(definition)'}</code>: {message.message}
              </li>
            ))}
          </ul>
        )}
      </div>
      <button type="button" disabled={!(check.kind === 'checked' && check.valid)} onClick={create}>
        Create from this definition
      </button>
      {error !== undefined && <Problem error={error} />}
    </div>
  );
}
