/** Who is asking, as the host's policies see it (Hangar:Api:AuthorizationPolicy, Hangar:Api:RolePoliciesModule). */
export interface PolicyCaller {
  tenantId: string;
  actor: string;
  userId?: string;
  /** The role the credential carries (a JWT's highest known role, a key's role); null when none. */
  role: 'Reader' | 'Operator' | 'Admin' | null;
  credential: 'token' | 'apiKey' | 'jwt';
  labels?: Record<string, string>;
}

/** SPEC Authentication 6: asked for every authenticated request after role and scope; false answers 403. */
export type AuthorizationPolicy = (request: { method: string; path: string; caller: PolicyCaller }) => boolean | Promise<boolean>;
export const defineAuthorizationPolicy = (policy: AuthorizationPolicy): AuthorizationPolicy => policy;

/**
 * SPEC Authentication 3: whether the caller holds a role, decided by the host. Registered for all
 * three roles, they replace the built-in order Reader < Operator < Admin.
 */
export type RolePolicies = Record<'Reader' | 'Operator' | 'Admin', (caller: PolicyCaller) => boolean | Promise<boolean>>;
export const defineRolePolicies = (policies: RolePolicies): RolePolicies => policies;
