import { createHangarClient, credentialHeaders, HangarProblemError, type HangarClient } from '@hangar/client';

/** The credential the console signs in with: a bearer token or an API key, kept for this tab only. */
export interface Credential {
  kind: 'token' | 'apiKey';
  value: string;
}

const STORAGE_KEY = 'hangar.console.credential';

/** Hangar:Api:Prefix, which the gateway writes into the page it serves. */
export const apiPrefix = document.querySelector<HTMLMetaElement>('meta[name="hangar-api-prefix"]')?.content ?? '';

export function storedCredential(): Credential | undefined {
  try {
    const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Credential | null;
    return stored && (stored.kind === 'token' || stored.kind === 'apiKey') && typeof stored.value === 'string' ? stored : undefined;
  } catch {
    return undefined;
  }
}

export function storeCredential(credential: Credential | undefined) {
  if (credential) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(credential));
  else sessionStorage.removeItem(STORAGE_KEY);
}

/** A client of the public API (the console has no routes of its own), as the credential allows. */
export function clientFor(credential: Credential, onRefused: () => void): HangarClient {
  return createHangarClient({
    baseUrl: location.origin,
    prefix: apiPrefix,
    ...asOptions(credential),
    // A person is waiting: a failed call is shown at once, not retried behind their back.
    retry: false,
    // A credential refused later (revoked, expired) signs the console out.
    fetch: async (request: Request) => {
      const response = await fetch(request);
      if (response.status === 401) onRefused();
      return response;
    },
  });
}

/** What to show of a failure: a problem's `detail` (and its field errors), else the error's message. */
export function describeError(error: unknown): string {
  if (error instanceof HangarProblemError) {
    const fields = error.errors.map((field) => `${field.path}: ${field.message}`);
    return [error.detail || error.title || `HTTP ${error.status}`, ...fields].join('\n');
  }
  return error instanceof Error ? error.message : String(error);
}

/** The client options that carry the credential. */
const asOptions = (credential: Credential) => (credential.kind === 'token' ? { token: credential.value } : { apiKey: credential.value });

/** Headers that carry the credential, for calls the typed client does not make (the API explorer's). */
export const headersFor = (credential: Credential) => credentialHeaders(asOptions(credential));
