import { z } from 'zod';

/** Agent names: 1–128 chars of `[A-Za-z0-9._-]`, starting with a letter or digit; compared exactly. */
export const AGENT_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const AgentName = z
  .string()
  .regex(AGENT_NAME_PATTERN, 'must be 1-128 characters of letters, digits, ".", "_" or "-", starting with a letter or digit');

const reference = (what: string) => z.string().min(1, `${what} must not be empty`).max(256);
const uniqueList = <T extends z.ZodType<string>>(item: T, max: number, what: string) =>
  z
    .array(item)
    .max(max, `at most ${max} ${what}`)
    .refine((items) => new Set(items).size === items.length, `${what} must not repeat`);

export const ModelRefSchema = z.strictObject({
  provider: z.string().min(1).max(128),
  model: z.string().min(1).max(256),
});

/** A JSON object (not an array, not null). */
const JsonObject = z.record(z.string(), z.unknown());

export const ModelBindingSchema = z.strictObject({
  provider: z.string().min(1).max(128),
  model: z.string().min(1).max(256),
  fallbacks: z.array(ModelRefSchema).max(10, 'at most 10 fallbacks').optional(),
  providerSettings: JsonObject.optional(),
});

export const ResponseFormatSchema = z
  .strictObject({
    kind: z.enum(['Text', 'Json', 'JsonSchema']),
    schema: JsonObject.optional(),
  })
  .superRefine((format, ctx) => {
    if (format.kind === 'JsonSchema' && !format.schema) {
      ctx.addIssue({ code: 'custom', path: ['schema'], message: 'is required when kind is JsonSchema' });
    }
    if (format.kind !== 'JsonSchema' && format.schema) {
      ctx.addIssue({ code: 'custom', path: ['schema'], message: 'is allowed only when kind is JsonSchema' });
    }
  });

export const AgentParameterSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 characters of letters, digits, "_", "." or "-", starting with a letter or "_"'),
  description: z.string().max(1024).nullish(),
  required: z.boolean().optional(),
});

/** Body of create, update, validate (SPEC "Agent definition request", API.md "Agents"). */
export const AgentDefinitionInputSchema = z
  .strictObject({
    name: AgentName,
    description: z.string().max(4096).nullish(),
    instructions: z.string().max(262144, 'at most 262144 characters').nullish(),
    model: ModelBindingSchema,
    tools: uniqueList(reference('a tool reference'), 128, 'tools').optional(),
    skills: uniqueList(reference('a skill reference'), 64, 'skills').optional(),
    agents: uniqueList(AgentName, 64, 'agents').optional(),
    responseFormat: ResponseFormatSchema.optional(),
    parameters: z
      .array(AgentParameterSchema)
      .max(64, 'at most 64 parameters')
      .refine((items) => new Set(items.map((item) => item.name)).size === items.length, 'parameter names must not repeat')
      .optional(),
  })
  .meta({ id: 'AgentDefinitionRequest' });

export type AgentDefinitionInput = z.input<typeof AgentDefinitionInputSchema>;

/** A definition with every optional field filled in: what is stored and returned. */
export interface AgentDefinition {
  name: string;
  description: string | null;
  instructions: string | null;
  model: {
    provider: string;
    model: string;
    fallbacks: Array<{ provider: string; model: string }>;
    providerSettings: Record<string, unknown>;
  };
  tools: string[];
  skills: string[];
  agents: string[];
  responseFormat: { kind: 'Text' | 'Json' | 'JsonSchema'; schema?: Record<string, unknown> };
  parameters: Array<{ name: string; description: string | null; required: boolean }>;
}

export interface AgentDefinitionRecord {
  definition: AgentDefinition;
  /** Absent for code-defined agents, which have no version history. */
  version?: number;
  createdAt?: string;
  createdBy?: string;
}

export function normalizeDefinition(input: z.output<typeof AgentDefinitionInputSchema>): AgentDefinition {
  return {
    name: input.name,
    description: input.description ?? null,
    instructions: input.instructions ?? null,
    model: {
      provider: input.model.provider,
      model: input.model.model,
      fallbacks: input.model.fallbacks ?? [],
      providerSettings: input.model.providerSettings ?? {},
    },
    tools: input.tools ?? [],
    skills: input.skills ?? [],
    agents: input.agents ?? [],
    responseFormat: input.responseFormat ?? { kind: 'Text' },
    parameters: (input.parameters ?? []).map((parameter) => ({
      name: parameter.name,
      description: parameter.description ?? null,
      required: parameter.required ?? false,
    })),
  };
}

export type ValidationSeverity = 'Error' | 'Warning';

export interface ValidationMessage {
  severity: ValidationSeverity;
  code: string;
  message: string;
  path: string;
}

export interface ValidationReport {
  valid: boolean;
  messages: ValidationMessage[];
}

/** `["model", "fallbacks", 0, "model"]` → `model.fallbacks[0].model` */
export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((text, segment) => {
    if (typeof segment === 'number') return `${text}[${segment}]`;
    return text ? `${text}.${String(segment)}` : String(segment);
  }, '');
}

/** `{{name}}` in the instructions becomes the parameter's value (unknown placeholders stay as written). */
export function renderInstructions(instructions: string | null, parameters: ReadonlyMap<string, string>): string | null {
  return instructions?.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g, (match, name: string) => parameters.get(name) ?? match) ?? null;
}
