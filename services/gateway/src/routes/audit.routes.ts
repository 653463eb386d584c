import type { governancePb } from '@hangar/contracts';
import { z } from 'zod';
import { pageNumber } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const AuditEntrySchema = z
  .object({
    id: z.string(),
    tenantId: z.string(),
    actor: z.string().describe('The authenticated principal: a JWT subject, an API key id or `auth-token`'),
    userId: z.string().nullable(),
    action: z.string().describe('`<resource>.<verb>`, e.g. `feedback.deleted`'),
    resourceType: z.string(),
    resourceId: z.string(),
    details: z.record(z.string(), z.unknown()),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'AuditEntry' });

const entryJson = (entry: governancePb.AuditEntry) => ({
  id: entry.id,
  tenantId: entry.tenantId,
  actor: entry.actor,
  userId: entry.userId ?? null,
  action: entry.action,
  resourceType: entry.resourceType,
  resourceId: entry.resourceId,
  details: entry.details ?? {},
  createdAt: entry.createdAt,
});

export const auditRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/audit',
    operationId: 'listAuditEntries',
    summary: 'List audit entries',
    description:
      'Returns the tenant’s audit trail, newest first: every admin change and security-relevant action with its actor. Paged with skip (default 0) and take (default 50, clamped to 1..200).',
    tag: 'Audit',
    auth: { role: 'Admin', scope: 'AuditRead' },
    query: z.object({
      action: z.string().optional(),
      resourceType: z.string().optional(),
      resourceId: z.string().optional(),
      skip: pageNumber(0),
      take: pageNumber(50),
    }),
    responses: { 200: { description: 'Audit entries', schema: AuditEntrySchema.array() } },
    async handler({ query, caller }, { governance }) {
      const { entries } = await governance.listAudit(query, { caller });
      return { status: 200, body: entries.map(entryJson) };
    },
  }),
];
