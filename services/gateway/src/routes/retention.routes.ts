import { RETENTION_TARGETS, retentionPb } from '@hangar/contracts';
import { parseDuration } from '@hangar/platform';
import { z } from 'zod';
import { problemResponse } from '../api.schemas.js';
import { requirePlatform } from '../http/platform-tenant.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Retention';

const SOURCES: Record<number, 'Stored' | 'Configuration' | 'Default'> = {
  [retentionPb.RetentionSource.RETENTION_SOURCE_STORED]: 'Stored',
  [retentionPb.RetentionSource.RETENTION_SOURCE_CONFIGURATION]: 'Configuration',
  [retentionPb.RetentionSource.RETENTION_SOURCE_DEFAULT]: 'Default',
};

/** SPEC's duration form, `d.hh:mm:ss` (e.g. `30.00:00:00`). */
function formatDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  const two = (value: number) => String(value).padStart(2, '0');
  return `${Math.floor(seconds / 86_400)}.${two(Math.floor(seconds / 3600) % 24)}:${two(Math.floor(seconds / 60) % 60)}:${two(seconds % 60)}`;
}

const MaxAgeSchema = z
  .string()
  .refine((value) => (parseDuration(value) ?? 0) > 0, 'must be a positive duration such as "30.00:00:00"')
  .nullable()
  .describe('How long rows are kept, "d.hh:mm:ss"; null keeps them forever');

const PolicySchema = z
  .object({
    target: z.enum(RETENTION_TARGETS),
    maxAge: z.string().nullable(),
    archive: z.boolean().describe('Rows are copied to <table>_archive before they are deleted'),
    source: z.enum(['Stored', 'Configuration', 'Default']),
    enabled: z.boolean().describe('Whether the background sweep applies it (Retention:Enabled)'),
  })
  .meta({ id: 'RetentionPolicy' });

const ResultSchema = z
  .object({ target: z.string(), deleted: z.number().int(), archived: z.number().int(), error: z.string().optional() })
  .meta({ id: 'RetentionResult' });

const TargetParams = z.object({ target: z.string() });

const policyJson = (policy: retentionPb.RetentionPolicy) => ({
  target: policy.target,
  maxAge: policy.maxAgeMs === undefined ? null : formatDuration(policy.maxAgeMs),
  archive: policy.archive,
  source: SOURCES[policy.source] ?? 'Default',
  enabled: policy.enabled,
});

/** API.md "Retention": platform-wide policies over configuration, and applying them now. */
export const retentionRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/retention',
    operationId: 'listRetentionPolicies',
    summary: 'List retention policies',
    description:
      'Returns the effective retention policy of every target: the stored one, else configuration, else the default, with its source. Needs the platform tenant or the static token.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'PlatformRead' },
    responses: { 200: { description: 'Policies', schema: PolicySchema.array() }, 403: problemResponse('Not the platform tenant') },
    async handler({ caller, principal }, context) {
      requirePlatform(principal, caller, context);
      return { status: 200, body: (await context.retention.listRetentionPolicies({}, { caller })).policies.map(policyJson) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/retention/{target}',
    operationId: 'putRetentionPolicy',
    summary: 'Set a retention policy',
    description:
      'Stores a target’s maximum age and whether rows are archived first; it takes precedence over configuration. IdempotencyKeys is fixed (400) and an unknown target is 404. Needs the platform tenant or the static token.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    params: TargetParams,
    body: z.strictObject({ maxAge: MaxAgeSchema, archive: z.boolean().default(false) }).meta({ id: 'RetentionPolicyRequest' }),
    responses: {
      200: { description: 'Replaced', schema: PolicySchema },
      201: { description: 'Stored', schema: PolicySchema },
      400: problemResponse('Invalid maxAge, or IdempotencyKeys (fixed by SPEC)'),
      403: problemResponse('Not the platform tenant'),
      404: problemResponse('Not a retention target'),
    },
    async handler({ params, body, caller, principal }, context) {
      requirePlatform(principal, caller, context);
      const { policy, created } = await context.retention.putRetentionPolicy(
        { target: params.target, maxAgeMs: body.maxAge === null ? undefined : parseDuration(body.maxAge), archive: body.archive },
        { caller },
      );
      return { status: created ? 201 : 200, body: policyJson(policy!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/retention/{target}',
    operationId: 'deleteRetentionPolicy',
    summary: 'Forget a retention policy',
    description:
      'Deletes a stored policy: the target follows configuration again. No stored policy is 404. Needs the platform tenant or the static token.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    params: TargetParams,
    responses: {
      204: { description: 'Forgotten' },
      403: problemResponse('Not the platform tenant'),
      404: problemResponse('No stored policy'),
    },
    async handler({ params, caller, principal }, context) {
      requirePlatform(principal, caller, context);
      await context.retention.deleteRetentionPolicy({ target: params.target }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/retention/run',
    operationId: 'runRetention',
    summary: 'Apply retention now',
    description:
      'Applies every effective policy now, also while Retention:Enabled is false, and reports what each target deleted and archived. It answers when the purge is done. Needs the platform tenant or the static token.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    responses: {
      200: { description: 'What each target deleted and archived', schema: z.object({ results: ResultSchema.array() }) },
      403: problemResponse('Not the platform tenant'),
    },
    async handler({ caller, principal }, context) {
      requirePlatform(principal, caller, context);
      const { results } = await context.retention.runRetention({}, { caller });
      return { status: 200, body: { results: results.map((result) => ({ ...result, error: result.error ?? undefined })) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/content-protection/reseal',
    operationId: 'resealContent',
    summary: 'Reseal protected content',
    description:
      'Has every service seal again, under ContentProtection:ActiveKeyId, each protected value that is plain or sealed with an older key, and reports how many each sealed; a service that fails is reported while the others go on. Needs the platform tenant or the static token.',
    tag: 'Content protection',
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    responses: {
      200: {
        description: 'How many values each service sealed again, or why it could not',
        schema: z.object({ results: z.array(z.object({ service: z.string(), resealed: z.number().int(), error: z.string().optional() })) }),
      },
      403: problemResponse('Not the platform tenant'),
    },
    async handler({ caller, principal }, context) {
      requirePlatform(principal, caller, context);
      const { results } = await context.retention.resealContent({}, { caller });
      return { status: 200, body: { results: results.map((result) => ({ ...result, error: result.error ?? undefined })) } };
    },
  }),
];
