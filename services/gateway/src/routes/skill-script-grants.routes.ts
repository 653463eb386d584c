import type { skillPb } from '@hangar/contracts';
import { z } from 'zod';
import { problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Skill script grants';

const GrantRequestSchema = z
  .strictObject({
    skillName: z.string().min(1).max(64),
    scriptName: z.string().min(1).max(64).optional().describe('Absent: every script of the skill'),
    expiresAt: z.iso.datetime({ offset: true }).optional().describe('Must be in the future; absent: no expiry'),
  })
  .meta({ id: 'SkillScriptGrantRequest' });

const GrantSchema = z
  .object({
    id: z.uuid(),
    skillName: z.string(),
    scriptName: z.string().nullable(),
    expiresAt: z.iso.datetime().nullable(),
    status: z.enum(['Active', 'Expired', 'Revoked']),
    createdAt: z.iso.datetime(),
    createdBy: z.string(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'SkillScriptGrant' });

const grantJson = (grant: skillPb.SkillScriptGrant) => ({
  id: grant.id,
  skillName: grant.skillName,
  scriptName: grant.scriptName ?? null,
  expiresAt: grant.expiresAt ?? null,
  status: grant.status,
  createdAt: grant.createdAt,
  createdBy: grant.createdBy,
  revokedAt: grant.revokedAt ?? null,
});

export const skillScriptGrantRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/skill-script-grants',
    operationId: 'listSkillScriptGrants',
    summary: 'List skill script grants',
    description: 'Returns the tenant’s grants, oldest first, with their status now: Active, Expired or Revoked.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'SecurityAdmin' },
    responses: { 200: { description: 'Grants, oldest first', schema: GrantSchema.array() } },
    async handler({ caller }, { skills }) {
      return { status: 200, body: (await skills.listGrants({}, { caller })).grants.map(grantJson) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/skill-script-grants',
    operationId: 'createSkillScriptGrant',
    summary: 'Grant a skill’s scripts',
    description:
      'Lets the scripts of a skill, or one of its scripts, run for this tenant until the grant is revoked or expires. While script execution is switched off (Skills:Scripts:Enabled) it is 409.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'SecurityAdmin' },
    body: GrantRequestSchema,
    responses: { 201: { description: 'Granted', schema: GrantSchema }, 409: problemResponse('Script execution is switched off') },
    async handler({ body, caller }, { skills }) {
      const { grant } = await skills.createGrant(body, { caller });
      return { status: 201, body: grantJson(grant!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/skill-script-grants/{skillName}',
    operationId: 'revokeSkillScriptGrant',
    summary: 'Revoke a skill script grant',
    description:
      'Revokes a grant as it was created: with scriptName for a one-script grant, without it for the skill-wide one. It takes effect at the next script call; no matching active grant is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'SecurityAdmin' },
    params: z.object({ skillName: z.string() }),
    query: z.object({ scriptName: z.string().min(1).optional() }),
    responses: { 204: { description: 'Revoked; effective at the next script call' }, 404: problemResponse('No matching active grant') },
    async handler({ params, query, caller }, { skills }) {
      await skills.revokeGrant({ skillName: params.skillName, scriptName: query.scriptName }, { caller });
      return { status: 204 };
    },
  }),
];
