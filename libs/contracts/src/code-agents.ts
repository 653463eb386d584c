import {
  AgentDefinitionInputSchema,
  AgentName,
  normalizeDefinition,
  type AgentDefinition,
  type AgentDefinitionInput,
} from './agents.schema.js';

const BRAND = Symbol.for('hangar.code-agent');

/**
 * What a factory builds for one caller: an agent definition without its name (the factory's name
 * is used). `instructions` is also read, best effort, for the detail view; a build without a
 * `model` can be shown but not run.
 */
export type BuiltAgent = Partial<Omit<AgentDefinitionInput, 'name'>> & { [key: string]: unknown };

/** Who the agent is being built for. */
export interface FactoryContext {
  tenantId: string;
  /** The authenticated user, when the credential names one. */
  userId?: string;
}

/**
 * The runnable definition a factory built, or why there is none. Unknown extra keys a factory
 * returns for its own use are ignored.
 */
export function definitionFromBuild(name: string, built: BuiltAgent): { definition: AgentDefinition } | { problem: string } {
  if (!built || typeof built !== 'object') return { problem: 'the factory returned no object' };
  const known = Object.fromEntries(Object.entries(built).filter(([key]) => key in AgentDefinitionInputSchema.shape));
  const parsed = AgentDefinitionInputSchema.safeParse({ ...known, name });
  if (!parsed.success) {
    return { problem: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(definition)'}: ${issue.message}`).join('; ') };
  }
  return { definition: normalizeDefinition(parsed.data) };
}

export type DeclarativeCodeAgent = { [BRAND]: true; kind: 'declarative'; definition: AgentDefinition };
export type FactoryCodeAgent = {
  [BRAND]: true;
  kind: 'factory';
  name: string;
  description: string | null;
  build: (context: FactoryContext) => BuiltAgent | Promise<BuiltAgent>;
};
export type CodeAgent = DeclarativeCodeAgent | FactoryCodeAgent;

/** A code-defined agent from a declarative definition; invalid shapes fail when the module loads. */
export function defineAgent(definition: AgentDefinitionInput): DeclarativeCodeAgent {
  const parsed = AgentDefinitionInputSchema.safeParse(definition);
  if (!parsed.success) {
    throw new Error(
      `defineAgent(${JSON.stringify(definition?.name)}): ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  }
  return { [BRAND]: true, kind: 'declarative', definition: normalizeDefinition(parsed.data) };
}

/** A code-defined agent built by a function at run time (its model and tools are opaque until then). */
export function agentFactory(name: string, build: FactoryCodeAgent['build'], options: { description?: string } = {}): FactoryCodeAgent {
  if (!AgentName.safeParse(name).success) throw new Error(`agentFactory: invalid agent name ${JSON.stringify(name)}`);
  return { [BRAND]: true, kind: 'factory', name, description: options.description ?? null, build };
}

export function isCodeAgent(value: unknown): value is CodeAgent {
  return !!value && typeof value === 'object' && (value as Record<symbol, unknown>)[BRAND] === true;
}

export const codeAgentName = (agent: CodeAgent) => (agent.kind === 'declarative' ? agent.definition.name : agent.name);
