import { z } from 'zod';
import { AgentDefinitionInputSchema, ModelRefSchema } from '@hangar/contracts';

/** Response shapes of API.md, for the OpenAPI document (requests are parsed with the contracts schemas). */

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string(),
    errorType: z.string(),
    traceId: z.string().nullable(),
    errors: z.array(z.object({ path: z.string(), message: z.string(), code: z.string().optional() })).optional(),
  })
  .loose()
  .meta({ id: 'Problem' });

const Nullable = <T extends z.ZodType>(schema: T) => schema.nullable();

export const StoredDefinitionSchema = AgentDefinitionInputSchema.extend({
  description: Nullable(z.string()),
  instructions: Nullable(z.string()),
  version: z.number().int().min(1),
  createdAt: z.iso.datetime(),
  createdBy: z.string(),
}).meta({ id: 'StoredAgentDefinition' });

export const AgentDescriptorSchema = z
  .object({
    name: z.string(),
    description: Nullable(z.string()),
    origin: z.enum(['Code', 'Database']),
    model: Nullable(ModelRefSchema),
    version: Nullable(z.number().int()),
    updatedAt: Nullable(z.iso.datetime()),
  })
  .meta({ id: 'AgentDescriptor' });

export const AgentDetailSchema = z
  .object({
    name: z.string(),
    origin: z.enum(['Code', 'Database']),
    isEditable: z.boolean(),
    definition: Nullable(z.union([StoredDefinitionSchema, AgentDefinitionInputSchema])),
    factoryInstructions: Nullable(z.string()),
    catalog: z.object({
      description: Nullable(z.string()),
      model: Nullable(ModelRefSchema),
      tools: z.array(z.string()),
      skills: z.array(z.string()),
      agents: z.array(z.string()),
    }),
  })
  .meta({ id: 'AgentDetail' });

export const ValidationReportSchema = z
  .object({
    valid: z.boolean(),
    messages: z.array(z.object({ severity: z.enum(['Error', 'Warning']), code: z.string(), message: z.string(), path: z.string() })),
  })
  .meta({ id: 'ValidationReport' });

export const EstimateSchema = z
  .object({
    estimatedPromptTokens: z.number().int(),
    contextWindowTokens: z.number().int().nullable(),
    allowedPromptTokens: z.number().int().nullable(),
    wouldBeRejected: z.boolean(),
    tokenizer: z.string(),
  })
  .meta({ id: 'ContextWindowEstimate' });

export const DiffSchema = z.object({ left: StoredDefinitionSchema, right: StoredDefinitionSchema }).meta({ id: 'AgentVersionDiff' });

export const RollbackRequestSchema = z.strictObject({ version: z.number().int().min(1).max(2147483647) }).meta({ id: 'RollbackRequest' });

export const CatalogModelSchema = z.object({
  provider: z.string(),
  providerKind: z.string(),
  model: z.string(),
  isDefault: z.boolean(),
  contextWindowTokens: Nullable(z.number().int()),
  maxOutputTokens: Nullable(z.number().int()),
});

export const CatalogToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  source: z.string(),
});

export const MetaSchema = z
  .object({
    service: z.literal('hangar'),
    version: z.string(),
    apiVersion: z.literal('v1'),
    authentication: z.array(z.enum(['token', 'apiKey', 'jwt'])),
    stores: z.object({
      definitions: z.string(),
      runs: z.string(),
      sessions: z.string(),
      attachments: z.string(),
      events: z.string(),
      cache: z.string(),
    }),
    roles: z.record(z.string(), z.array(z.string())),
  })
  .meta({ id: 'Meta' });

/** `{name}` path parameter of agent routes. Any string: an impossible name is simply not found. */
export const AgentNameParams = z.object({ name: z.string().describe('Agent name, compared exactly') });

const int32 = z
  .string()
  .regex(/^-?\d{1,10}$/, 'must be an integer')
  .transform(Number)
  .refine((value) => value >= -2147483648 && value <= 2147483647, 'must be a 32-bit integer');

export const DiffParams = z.object({
  name: z.string().describe('Agent name'),
  a: int32.describe('Version shown as `left`'),
  b: int32.describe('Version shown as `right`'),
});

/** A documented problem+json response of a route. */
export const problemResponse = (description: string) => ({ description, schema: ProblemSchema, contentType: 'application/problem+json' });

/** The `Location` response header naming what a 201 created or a 202 accepted. */
export const locationHeader = (description: string) => ({ description, schema: z.string() });

/** `skip`/`take` query values: integers (400 otherwise); services clamp them. */
export const pageNumber = (fallback: number) =>
  z
    .string()
    .regex(/^-?\d{1,9}$/, 'must be an integer')
    .transform(Number)
    .optional()
    .transform((value) => value ?? fallback);

/** A request body of one file sent as multipart/form-data in a part named `file` (for the OpenAPI document). */
export const FILE_PART_BODY = {
  contentType: 'multipart/form-data',
  schema: {
    type: 'object',
    required: ['file'],
    properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } },
  },
};
