import { Metadata } from 'nice-grpc-common';

/**
 * Who a call acts for. The gateway authenticates the HTTP request and forwards the result in
 * gRPC metadata; services trust it because their ports are reachable only inside the deployment.
 */
export interface Caller {
  tenantId: string;
  /** Stable id of the authenticated principal (user id, API key id, or `auth-token`). */
  actor: string;
  /** The authenticated user, when the credential names one (a JWT subject); the static token has none. */
  userId?: string;
  /** The caller's role (`Reader`, `Operator`, `Admin`), for service rules such as session management. */
  role?: string;
  /** Attribution labels from the credential (never from a request body); runs record them. */
  labels?: Record<string, string>;
}

const TENANT = 'x-hangar-tenant';
const ACTOR = 'x-hangar-actor';
const USER = 'x-hangar-user';
const ROLE = 'x-hangar-role';
const LABELS = 'x-hangar-labels';

export function writeCaller(metadata: Metadata, caller: Caller): void {
  metadata.set(TENANT, caller.tenantId);
  metadata.set(ACTOR, encodeURIComponent(caller.actor));
  if (caller.userId) metadata.set(USER, encodeURIComponent(caller.userId));
  if (caller.role) metadata.set(ROLE, caller.role);
  if (caller.labels && Object.keys(caller.labels).length) metadata.set(LABELS, encodeURIComponent(JSON.stringify(caller.labels)));
}

const LABEL_KEY = /^[A-Za-z0-9][A-Za-z0-9_.\/-]{0,63}$/;
const MAX_LABELS = 20;
const MAX_LABEL_VALUE = 256;

/**
 * The labels a credential carries, kept only when well-formed: an object of at most 20 entries
 * whose keys are 1–64 of `[A-Za-z0-9_./-]` and whose values are strings of at most 256 characters
 * (anything else is dropped, entry by entry, so one bad claim never locks a user out).
 */
export function sanitizeLabels(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return {};
  const labels: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (Object.keys(labels).length >= MAX_LABELS) break;
    if (LABEL_KEY.test(key) && typeof entry === 'string' && entry.length <= MAX_LABEL_VALUE) labels[key] = entry;
  }
  return labels;
}

/** Reads the caller from metadata; a call without a tenant is refused by {@link callerMiddleware}. */
export function readCaller(metadata: Metadata): Caller | undefined {
  const tenantId = metadata.get(TENANT);
  const actor = metadata.get(ACTOR);
  const userId = metadata.get(USER);
  const role = metadata.get(ROLE);
  const labels = metadata.get(LABELS);
  if (typeof tenantId !== 'string' || !tenantId) return undefined;
  return {
    tenantId,
    actor: typeof actor === 'string' ? decodeURIComponent(actor) : 'unknown',
    ...(typeof userId === 'string' && userId ? { userId: decodeURIComponent(userId) } : {}),
    ...(typeof role === 'string' && role ? { role } : {}),
    ...(typeof labels === 'string' && labels ? { labels: sanitizeLabels(parseJson(decodeURIComponent(labels))) } : {}),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
