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
}

const TENANT = 'x-hangar-tenant';
const ACTOR = 'x-hangar-actor';
const USER = 'x-hangar-user';
const ROLE = 'x-hangar-role';

export function writeCaller(metadata: Metadata, caller: Caller): void {
  metadata.set(TENANT, caller.tenantId);
  metadata.set(ACTOR, encodeURIComponent(caller.actor));
  if (caller.userId) metadata.set(USER, encodeURIComponent(caller.userId));
  if (caller.role) metadata.set(ROLE, caller.role);
}

/** Reads the caller from metadata; a call without a tenant is refused by {@link callerMiddleware}. */
export function readCaller(metadata: Metadata): Caller | undefined {
  const tenantId = metadata.get(TENANT);
  const actor = metadata.get(ACTOR);
  const userId = metadata.get(USER);
  const role = metadata.get(ROLE);
  if (typeof tenantId !== 'string' || !tenantId) return undefined;
  return {
    tenantId,
    actor: typeof actor === 'string' ? decodeURIComponent(actor) : 'unknown',
    ...(typeof userId === 'string' && userId ? { userId: decodeURIComponent(userId) } : {}),
    ...(typeof role === 'string' && role ? { role } : {}),
  };
}
