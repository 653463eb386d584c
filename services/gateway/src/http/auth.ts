import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { forbidden, HangarError, unauthorized, validationError, type Caller, type HangarConfig } from '@hangar/platform';

export const ROLES = ['Reader', 'Operator', 'Admin'] as const;
export type Role = (typeof ROLES)[number];

export const SCOPES = [
  'RunsRead', 'RunsWrite', 'AgentsRead', 'AgentsAdmin', 'ExternalInvoke', 'KnowledgeRead', 'KnowledgeAdmin',
  'WorkflowsRead', 'WorkflowsAdmin', 'EvalsRead', 'EvalsAdmin', 'ExperimentsRead', 'ExperimentsAdmin',
  'PlatformRead', 'PlatformAdmin', 'SecurityAdmin', 'AuditRead',
] as const;
export type Scope = (typeof SCOPES)[number];

/** An authenticated credential. Effective authority is role ∩ scopes (a scope never widens a role). */
export interface Principal {
  actor: string;
  role: Role;
  scopes: ReadonlySet<Scope>;
  method: 'token' | 'apiKey' | 'jwt';
}

export const roleIncludes = (held: Role, required: Role) => ROLES.indexOf(held) >= ROLES.indexOf(required);

const digest = (value: string) => createHash('sha256').update(value).digest();

/** `Authorization: Bearer <token>` against the static token (compared in constant time). */
export function createAuthenticator(config: HangarConfig) {
  const tokenDigest = config.Hangar.Api.AuthToken ? digest(config.Hangar.Api.AuthToken) : undefined;
  const everyScope: ReadonlySet<Scope> = new Set(SCOPES);

  return {
    methods: (): Principal['method'][] => (tokenDigest ? ['token'] : []),
    authenticate(request: Request): Principal {
      const header = request.get('authorization');
      const apiKey = request.get('x-api-key');
      if (!header && !apiKey) throw unauthorized('a credential is required: send Authorization: Bearer <token>');
      if (header) {
        const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (!match) throw unauthorized('the Authorization header must use the Bearer scheme');
        if (tokenDigest && timingSafeEqual(digest(match[1]), tokenDigest)) {
          return { actor: 'auth-token', role: 'Admin', scopes: everyScope, method: 'token' };
        }
      }
      throw unauthorized('the credential is not valid');
    },
  };
}

export function authorize(principal: Principal, role: Role, scope: Scope): void {
  if (!roleIncludes(principal.role, role)) throw forbidden(`this operation requires the ${role} role`);
  if (!principal.scopes.has(scope)) throw forbidden(`this operation requires the ${scope} scope`);
}

const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** SPEC Authentication 9: the default tenant unless tenancy resolves one from the request. */
export function resolveTenant(config: HangarConfig, request: Request): string {
  const tenancy = config.Tenancy;
  if (!tenancy.Enabled || !tenancy.AllowHeaderResolution) return config.DefaultTenantId;
  const requested = request.get(tenancy.HeaderName);
  if (!requested) return config.DefaultTenantId;
  if (!TENANT_ID.test(requested)) {
    throw validationError(`the ${tenancy.HeaderName} header is not a valid tenant id`, [{ path: tenancy.HeaderName, message: 'must be 1-128 characters of letters, digits, ".", "_" or "-"' }]);
  }
  if (tenancy.AllowedTenants.length > 0 && !tenancy.AllowedTenants.includes(requested)) {
    throw forbidden(`tenant "${requested}" is not allowed`);
  }
  return requested;
}

export function callerOf(principal: Principal, tenantId: string): Caller {
  return { tenantId, actor: principal.actor };
}

const LOOPBACK_V4 = /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

export function isLoopback(address: string | undefined): boolean {
  return !!address && (address === '::1' || LOOPBACK_V4.test(address));
}

export const remoteAccessDenied = () =>
  new HangarError('forbidden', 'remote access is disabled; call from this host or set Hangar:Api:AllowRemoteAccess', {}, 'remote_access_disabled');
