import { HangarError, notFound, validationError, type AuditWriter, type Caller } from '@hangar/platform';
import type { Grant } from './grant.model.js';
import type { GrantRepository } from './grant.repository.js';

export interface GrantServiceDeps {
  repository: GrantRepository;
  /** Skills:Scripts:Enabled: grants can only be created while scripts may execute at all. */
  scriptsEnabled: boolean;
  audit: AuditWriter;
}

/** Skill script grants (SPEC "Skill script grants"): per tenant, for a whole skill or one script, until revoked or expired. */
export function createGrantService(deps: GrantServiceDeps) {
  const { repository } = deps;
  return {
    list: (caller: Caller): Promise<Grant[]> => repository.list(caller.tenantId),

    async create(caller: Caller, request: { skillName: string; scriptName: string | null; expiresAt: string | null }): Promise<Grant> {
      if (!deps.scriptsEnabled)
        throw new HangarError('conflict', 'skill scripts cannot run here (Skills:Scripts:Enabled is false), so nothing can be granted');
      const expiresAt = request.expiresAt === null ? null : new Date(request.expiresAt);
      if (expiresAt && expiresAt.getTime() <= Date.now())
        throw validationError('the grant would never be in force', [{ path: 'expiresAt', message: 'must be in the future' }]);
      const grant = await repository.create(caller.tenantId, { ...request, expiresAt, createdBy: caller.actor });
      await deps.audit(caller, {
        action: 'skill-script-grant.created',
        resourceType: 'skill-script-grant',
        resourceId: grant.id,
        details: { skillName: grant.skillName, scriptName: grant.scriptName, expiresAt: grant.expiresAt },
      });
      return grant;
    },

    /** Revokes as created (whole skill, or that script); a skill-wide grant outlives a revoked script grant. */
    async revoke(caller: Caller, skillName: string, scriptName: string | null): Promise<void> {
      const revoked = await repository.revoke(caller.tenantId, skillName, scriptName, caller.actor);
      if (!revoked.length)
        throw notFound(
          `no active grant for ${scriptName === null ? `skill ${skillName} as a whole` : `script ${scriptName} of skill ${skillName}`}`,
        );
      for (const grant of revoked)
        await deps.audit(caller, {
          action: 'skill-script-grant.revoked',
          resourceType: 'skill-script-grant',
          resourceId: grant.id,
          details: { skillName: grant.skillName, scriptName: grant.scriptName },
        });
    },

    /** Whether a grant in force covers this script at this moment (asked at each script call). */
    covers: (caller: Caller, skillName: string, scriptName: string) => repository.covers(caller.tenantId, skillName, scriptName),
  };
}

export type GrantService = ReturnType<typeof createGrantService>;
