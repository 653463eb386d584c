import { useState } from 'preact/hooks';
import { clientFor, type Credential } from '../api.js';
import { Problem } from '../ui.js';

/** Asks for a bearer token or an API key, and keeps it (for this tab) once the API accepts it. */
export function SignIn({ refused, onSignedIn }: { refused: boolean; onSignedIn: (credential: Credential) => void }) {
  const [kind, setKind] = useState<Credential['kind']>('token');
  const [value, setValue] = useState('');
  const [error, setError] = useState<unknown>();
  const [checking, setChecking] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const credential = { kind, value: value.trim() };
    setChecking(true);
    setError(undefined);
    try {
      await clientFor(credential, () => {}).agents.list();
      onSignedIn(credential);
    } catch (caught) {
      setError(caught);
    } finally {
      setChecking(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Hangar Console</h1>
      {refused && <p class="problem">The API refused the credential in use (revoked or expired?): sign in again.</p>}
      <form onSubmit={submit}>
        <fieldset>
          <legend>Sign in with</legend>
          <label>
            <input type="radio" name="kind" checked={kind === 'token'} onChange={() => setKind('token')} /> Bearer token
          </label>
          <label>
            <input type="radio" name="kind" checked={kind === 'apiKey'} onChange={() => setKind('apiKey')} /> API key
          </label>
        </fieldset>
        <label>
          {kind === 'token' ? 'Token' : 'API key'}
          <input
            name="credential"
            type="password"
            autocomplete="off"
            required
            value={value}
            onInput={(event) => setValue(event.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={checking || !value.trim()}>
          {checking ? 'Checking…' : 'Sign in'}
        </button>
        {error !== undefined && <Problem error={error} />}
        <p class="muted">Kept in this tab only (session storage); every call goes through Hangar’s public API.</p>
      </form>
    </main>
  );
}
