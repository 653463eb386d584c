import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { TENANT_ID } from '@hangar/contracts';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { isApiKey, type ApiKeyVerifier } from './api-key-auth.js';
import type { HostPolicies } from './host-policies.js';
import {
  forbidden,
  HangarError,
  roleIncludes,
  ROLES,
  sanitizeLabels,
  unauthorized,
  validationError,
  type Caller,
  type HangarConfig,
  type Role,
} from '@hangar/platform';

export const SCOPES = [
  'RunsRead',
  'RunsWrite',
  'AgentsRead',
  'AgentsAdmin',
  'ExternalInvoke',
  'KnowledgeRead',
  'KnowledgeAdmin',
  'WorkflowsRead',
  'WorkflowsAdmin',
  'EvalsRead',
  'EvalsAdmin',
  'ExperimentsRead',
  'ExperimentsAdmin',
  'PlatformRead',
  'PlatformAdmin',
  'SecurityAdmin',
  'AuditRead',
] as const;
export type Scope = (typeof SCOPES)[number];

/** An authenticated credential. Effective authority is role ∩ scopes (a scope never widens a role). */
export interface Principal {
  /** Who the audit trail names (Audit:ActorClaimType for a JWT). */
  actor: string;
  /** The user a JWT names (Hangar:Api:Jwt:UserClaim): session ownership and attribution. */
  userId?: string;
  /** Null when the credential carries no known role: it is authenticated but may do nothing. */
  role: Role | null;
  scopes: ReadonlySet<Scope>;
  method: 'token' | 'apiKey' | 'jwt';
  /** Tenant named by the credential itself (a JWT claim), when tenancy reads one. */
  tenantId?: string;
  /** Attribution labels the credential carries (a JWT claim). */
  labels?: Record<string, string>;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

const claimValues = (payload: JWTPayload, claim: string): string[] => {
  const value = payload[claim];
  if (Array.isArray(value)) return value.filter((entry): entry is string => typeof entry === 'string');
  return typeof value === 'string' ? value.split(' ').filter(Boolean) : [];
};

/** The claims that name a person, in order: the configured one, then name identifier, name, subject. */
const ACTOR_CLAIMS = [
  'nameid',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier',
  'name',
  'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
  'sub',
];

/** The actor the audit trail records for a JWT (SPEC Limits "Attachments, audit": Audit:ActorClaimType). */
function auditActor(payload: JWTPayload, configured: string | null): string | undefined {
  for (const claim of configured ? [configured, ...ACTOR_CLAIMS] : ACTOR_CLAIMS) {
    const value = payload[claim];
    if (typeof value === 'string' && value) return value;
  }
  return undefined;
}

/** A JWT's role is the highest known role it names; its scopes (if any) narrow that role. */
function principalFromJwt(payload: JWTPayload, config: HangarConfig): Principal {
  const jwt = config.Hangar.Api.Jwt;
  const roles = claimValues(payload, jwt.RoleClaim).filter((role): role is Role => (ROLES as readonly string[]).includes(role));
  const role = roles.sort((a, b) => ROLES.indexOf(b) - ROLES.indexOf(a))[0] ?? null;
  const named = claimValues(payload, jwt.ScopeClaim).filter((scope): scope is Scope => (SCOPES as readonly string[]).includes(scope));
  const hasScopeClaim = payload[jwt.ScopeClaim] !== undefined;
  const user = payload[jwt.UserClaim];
  const userId = typeof user === 'string' && user ? user : undefined;
  const tenantClaim = config.Tenancy.Enabled && config.Tenancy.ClaimType ? payload[config.Tenancy.ClaimType] : undefined;
  return {
    actor: auditActor(payload, config.Audit.ActorClaimType) ?? userId ?? 'jwt',
    ...(userId && { userId }),
    role,
    scopes: new Set(hasScopeClaim ? named : SCOPES),
    method: 'jwt',
    tenantId: typeof tenantClaim === 'string' ? tenantClaim : undefined,
    labels: sanitizeLabels(payload[jwt.LabelsClaim]),
  };
}

/**
 * `Authorization: Bearer <credential>`: the static token (constant-time compare), an API key
 * (`hgk_…`, also as `X-API-Key`) or a JWT.
 */
export function createAuthenticator(config: HangarConfig, apiKeys?: ApiKeyVerifier) {
  const tokenDigest = config.Hangar.Api.AuthToken ? digest(config.Hangar.Api.AuthToken) : undefined;
  const everyScope: ReadonlySet<Scope> = new Set(SCOPES);
  const jwt = config.Hangar.Api.Jwt;
  const keySet = !jwt.Enabled ? undefined : jwt.Jwks ? createLocalJWKSet(JSON.parse(jwt.Jwks)) : createRemoteJWKSet(new URL(jwt.JwksUri!));

  async function verifyJwt(token: string): Promise<Principal> {
    try {
      const { payload } = await jwtVerify(token, keySet!, {
        issuer: jwt.Issuer ?? undefined,
        audience: jwt.Audience ?? undefined,
      });
      return principalFromJwt(payload, config);
    } catch {
      throw unauthorized('the credential is not valid');
    }
  }

  return {
    methods: (): Principal['method'][] => [
      ...(tokenDigest ? ['token' as const] : []),
      ...(apiKeys ? ['apiKey' as const] : []),
      ...(keySet ? ['jwt' as const] : []),
    ],
    async authenticate(request: Request): Promise<Principal> {
      const header = request.get('authorization');
      const apiKey = request.get('x-api-key');
      if (!header && !apiKey) throw unauthorized('a credential is required: send Authorization: Bearer <token>');
      if (header) {
        const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (!match) throw unauthorized('the Authorization header must use the Bearer scheme');
        const credential = match[1];
        if (tokenDigest && timingSafeEqual(digest(credential), tokenDigest)) {
          return { actor: 'auth-token', role: 'Admin', scopes: everyScope, method: 'token' };
        }
        if (apiKeys && isApiKey(credential)) return apiKeys.verify(credential);
        if (keySet && credential.split('.').length === 3) return verifyJwt(credential);
      } else if (apiKeys && apiKey) {
        return apiKeys.verify(apiKey);
      }
      throw unauthorized('the credential is not valid');
    },
  };
}

/** Role ∩ scope (SPEC Authentication 4): the role as the host's role policies or the built-in order decide, and the scope. */
export async function authorize(
  principal: Principal,
  caller: Caller,
  required: { role: Role; scope: Scope },
  policies: Pick<HostPolicies, 'holdsRole'>,
): Promise<void> {
  if (!(await policies.holdsRole(principal, caller, required.role))) throw forbidden(`this operation requires the ${required.role} role`);
  if (!principal.scopes.has(required.scope)) throw forbidden(`this operation requires the ${required.scope} scope`);
}

/** SPEC Authentication 9: the default tenant unless tenancy resolves one from the request. */
export function resolveTenant(config: HangarConfig, request: Request, principal?: Principal): string {
  // An API key belongs to the tenant it was created in, whatever else the request says.
  if (principal?.method === 'apiKey' && principal.tenantId) return principal.tenantId;
  const tenancy = config.Tenancy;
  if (!tenancy.Enabled) return config.DefaultTenantId;
  const requested = principal?.tenantId ?? (tenancy.AllowHeaderResolution ? request.get(tenancy.HeaderName) : undefined);
  if (!requested) return config.DefaultTenantId;
  if (!TENANT_ID.test(requested)) {
    throw validationError(`the tenant id "${requested}" is not valid`, [
      { path: tenancy.HeaderName, message: 'must be 1-128 characters of letters, digits, ".", "_" or "-"' },
    ]);
  }
  if (tenancy.AllowedTenants.length > 0 && !tenancy.AllowedTenants.includes(requested)) {
    throw forbidden(`tenant "${requested}" is not allowed`);
  }
  return requested;
}

/** What the services learn about the caller: tenant, actor, and the user and role when there are any. */
export function callerOf(principal: Principal | undefined, tenantId: string): Caller {
  if (!principal) return { tenantId, actor: 'anonymous' };
  return {
    tenantId,
    actor: principal.actor,
    ...(principal.userId ? { userId: principal.userId } : {}),
    ...(principal.role ? { role: principal.role } : {}),
    ...(principal.labels && Object.keys(principal.labels).length ? { labels: principal.labels } : {}),
  };
}

const LOOPBACK_V4 = /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

export function isLoopback(address: string | undefined): boolean {
  return !!address && (address === '::1' || LOOPBACK_V4.test(address));
}

export const remoteAccessDenied = () =>
  new HangarError(
    'forbidden',
    'remote access is disabled; call from this host or set Hangar:Api:AllowRemoteAccess',
    {},
    'remote_access_disabled',
  );
