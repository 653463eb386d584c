import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AuthorizationPolicy, PolicyCaller, RolePolicies } from '@hangar/contracts';
import { forbidden, roleIncludes, ROLES, type Caller, type HangarConfig, type Role } from '@hangar/platform';
import type { Principal } from './auth.js';

const importFrom = (modulePath: string, baseDir: string) => import(pathToFileURL(resolve(baseDir, modulePath)).href);

/** The host's policies (SPEC Authentication 3 and 6), loaded at start; a misconfiguration stops the start. */
export interface HostPolicies {
  /** Whether the principal holds `role`: the host's role policy when registered, else the built-in order. */
  holdsRole(principal: Principal, caller: Caller, role: Role): Promise<boolean>;
  /** Asks Hangar:Api:AuthorizationPolicy, when one is named; throws 403 when it denies. */
  authorizeRequest(method: string, path: string, principal: Principal, caller: Caller): Promise<void>;
}

export async function loadHostPolicies(config: HangarConfig, baseDir = process.cwd()): Promise<HostPolicies> {
  const api = config.Hangar.Api;
  let roles: RolePolicies | undefined;
  if (api.RolePoliciesModule) {
    const exported = await importFrom(api.RolePoliciesModule, baseDir);
    roles = exported.rolePolicies ?? exported.default;
  }
  const registered = roles !== undefined && ROLES.every((role) => typeof roles![role] === 'function');
  if (api.RequireRolePolicies && !registered) {
    throw new Error(
      'Hangar:Api:RequireRolePolicies is true, but no role policies are registered: Hangar:Api:RolePoliciesModule must name a module ' +
        'exporting rolePolicies with a function for each of Reader, Operator and Admin',
    );
  }
  if (api.RolePoliciesModule && !registered) {
    throw new Error(
      `Hangar:Api:RolePoliciesModule: ${api.RolePoliciesModule} exports no rolePolicies for each of Reader, Operator and Admin`,
    );
  }
  let policy: AuthorizationPolicy | undefined;
  if (api.AuthorizationPolicy) {
    const exported = await importFrom(api.AuthorizationPolicy, baseDir);
    policy = exported.authorizeRequest ?? exported.default;
    if (typeof policy !== 'function')
      throw new Error(`Hangar:Api:AuthorizationPolicy: ${api.AuthorizationPolicy} exports no authorizeRequest function`);
  }

  const policyCaller = (principal: Principal, caller: Caller): PolicyCaller => ({
    tenantId: caller.tenantId,
    actor: caller.actor,
    ...(caller.userId && { userId: caller.userId }),
    role: principal.role,
    credential: principal.method,
    ...(caller.labels && { labels: caller.labels }),
  });

  return {
    async holdsRole(principal, caller, role) {
      if (!registered) return roleIncludes(principal.role, role);
      return (await roles![role](policyCaller(principal, caller))) === true;
    },
    async authorizeRequest(method, path, principal, caller) {
      if (policy && (await policy({ method, path, caller: policyCaller(principal, caller) })) !== true)
        throw forbidden('the authorization policy (Hangar:Api:AuthorizationPolicy) denied this request');
    },
  };
}
