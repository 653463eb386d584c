import type { governancePb } from '@hangar/contracts';
import { z } from 'zod';
import { problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Quotas';

const QuotaRuleRequestSchema = z
  .strictObject({
    metric: z
      .enum(['Runs', 'Tokens', 'Cost'])
      .describe(
        'Runs started, total tokens, or cost (in Pricing:Currency); a Cost rule for every agent also counts and refuses images, speech and transcriptions asked for outside any run',
      ),
    period: z.enum(['Hour', 'Day', 'Month']).describe('The window, by the wall clock of Quotas:TimeZone'),
    limit: z.number().positive(),
    agentName: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('Only runs of this agent count and are refused; absent: every agent (and, for Cost, spend outside any run)'),
  })
  .meta({ id: 'QuotaRuleRequest' });

const QuotaRuleSchema = z
  .object({
    name: z.string(),
    metric: z.enum(['Runs', 'Tokens', 'Cost']),
    period: z.enum(['Hour', 'Day', 'Month']),
    limit: z.number(),
    agentName: z.string().nullable(),
    used: z.number().describe('Used in the current window'),
    windowStart: z.iso.datetime(),
    resetsAt: z.iso.datetime(),
  })
  .meta({ id: 'QuotaRule' });

const NameParams = z.object({ name: z.string() });

const ruleJson = (rule: governancePb.QuotaRule) => ({
  name: rule.name,
  metric: rule.metric,
  period: rule.period,
  limit: rule.limit,
  agentName: rule.agentName ?? null,
  used: rule.used,
  windowStart: rule.windowStart,
  resetsAt: rule.resetsAt,
});

export const quotaRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/quotas',
    operationId: 'listQuotaRules',
    summary: 'List quota rules',
    description: 'Returns the tenant’s quota rules by name, each with what its current window used and when the window resets.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformRead' },
    responses: { 200: { description: 'Quota rules by name', schema: QuotaRuleSchema.array() } },
    async handler({ caller }, { governance }) {
      return { status: 200, body: (await governance.listQuotaRules({}, { caller })).rules.map(ruleJson) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/quotas/{name}',
    operationId: 'putQuotaRule',
    summary: 'Create or replace a quota rule',
    description:
      'Stores a quota rule over runs, tokens or cost per hour, day or month, for every agent or one. While a rule’s window is used up, runs are refused with 429 quota_exceeded. Answers 201 when it created the rule, 200 when it replaced one.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    params: NameParams,
    body: QuotaRuleRequestSchema,
    responses: {
      200: { description: 'Replaced', schema: QuotaRuleSchema },
      201: { description: 'Created', schema: QuotaRuleSchema },
    },
    async handler({ params, body, caller }, { governance }) {
      const { rule, created } = await governance.putQuotaRule({ rule: { name: params.name, ...body, used: 0 } }, { caller });
      return { status: created ? 201 : 200, body: ruleJson(rule!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/quotas/{name}',
    operationId: 'deleteQuotaRule',
    summary: 'Delete a quota rule',
    description: 'Deletes a quota rule; usage already counted is kept for the other rules. An unknown rule is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    params: NameParams,
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('No rule of that name') },
    async handler({ params, caller }, { governance }) {
      await governance.deleteQuotaRule({ name: params.name }, { caller });
      return { status: 204 };
    },
  }),
];
