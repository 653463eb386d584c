import {
  type AgentChange,
  renderInstructions,
  type AgentDefinition,
  type AgentDefinitionRecord,
  definitionFromBuild,
  type BuiltAgent,
  type CodeAgent,
  type FactoryCodeAgent,
  type ValidationReport,
  KNOWLEDGE_REFERENCE_PREFIX,
  MCP_REFERENCE_PREFIX,
} from '@hangar/contracts';
import { conflict, HangarError, notFound, validationError, type Caller, type FieldError } from '@hangar/platform';
import type { AgentRepository } from './agent.repository.js';
import { validateDefinition } from './agent-validation.js';
import type { Catalog, CatalogTool } from './catalog.js';
import type { McpReferenceCheck } from './tool-servers/tool-server.service.js';
import { countPromptTokens, estimatePrompt, type PromptEstimate } from './prompt-estimate.js';

export interface AgentDescriptor {
  name: string;
  description: string | null;
  origin: 'Code' | 'Database';
  model: { provider: string; model: string } | null;
  version: number | null;
  updatedAt: string | null;
}

export interface AgentCatalogSummary {
  description: string | null;
  model: { provider: string; model: string } | null;
  tools: string[];
  skills: string[];
  agents: string[];
}

export interface AgentDetail {
  name: string;
  origin: 'Code' | 'Database';
  isEditable: boolean;
  definition: AgentDefinitionRecord | null;
  factoryInstructions: string | null;
  catalog: AgentCatalogSummary;
}

/**
 * What a fresh lookup says of each of an agent's `mcp:<server>/<tool>` tools (the tool servers), or
 * `knowledge:<collection>` tools (the knowledge service).
 */
export type ToolReferenceCheck = (caller: Caller, references: string[]) => Promise<Map<string, McpReferenceCheck>>;

/** Which of a list of skill names exist for a tenant (answered by the skill service). */
export type SkillLookup = (caller: Caller, names: string[]) => Promise<Set<string>>;

export interface AgentRegistryDeps {
  repository: AgentRepository;
  catalog: Catalog;
  codeAgents: Map<string, CodeAgent>;
  findSkills: SkillLookup;
  checkMcpTools: ToolReferenceCheck;
  checkKnowledgeTools: ToolReferenceCheck;
  /** The tenant's discovered MCP tools, for the tool catalog. */
  mcpTools: (caller: Caller) => Promise<CatalogTool[]>;
  maxSkillsPerAgent: number;
  /** `Preflight:ReserveRatio`: the share of the window kept for the answer. */
  reserveRatio: number;
  /** A change was committed: ship it now (outbox) or hand it to the in-process log; never throws. */
  changed: (change: AgentChange) => Promise<void>;
  /** How long a factory may take when its instructions are read for the detail view. */
  factoryReadTimeoutMs?: number;
  /** How long a factory may take to build the agent a run uses. */
  factoryBuildTimeoutMs?: number;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Rules of SPEC "Agents" 1–8: code and database agents, versions, rollback, diff, validation. */
export function createAgentRegistryService(deps: AgentRegistryDeps) {
  const { repository, catalog, codeAgents } = deps;

  const codeDescriptor = (agent: CodeAgent): AgentDescriptor =>
    agent.kind === 'declarative'
      ? {
          name: agent.definition.name,
          description: agent.definition.description,
          origin: 'Code',
          model: { provider: agent.definition.model.provider, model: agent.definition.model.model },
          version: null,
          updatedAt: null,
        }
      : { name: agent.name, description: agent.description, origin: 'Code', model: null, version: null, updatedAt: null };

  const summaryOf = (definition: AgentDefinition): AgentCatalogSummary => ({
    description: definition.description,
    model: { provider: definition.model.provider, model: definition.model.model },
    tools: definition.tools,
    skills: definition.skills,
    agents: definition.agents,
  });

  /** Calls a factory for this caller; undefined when it takes longer than `timeoutMs`. */
  async function build(agent: FactoryCodeAgent, caller: Caller, timeoutMs: number): Promise<BuiltAgent | undefined> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
      return await Promise.race([Promise.resolve(agent.build({ tenantId: caller.tenantId, userId: caller.userId })), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function readFactoryInstructions(agent: FactoryCodeAgent, caller: Caller) {
    try {
      const built = await build(agent, caller, deps.factoryReadTimeoutMs ?? 2000);
      return typeof built?.instructions === 'string' ? built.instructions : null;
    } catch {
      return null; // best effort by SPEC: a failing factory reads as null
    }
  }

  /** A factory's definition for this caller; 501 naming the reason when it builds nothing runnable. */
  async function buildDefinition(agent: FactoryCodeAgent, caller: Caller): Promise<AgentDefinition> {
    const unrunnable = (reason: string) =>
      new HangarError('notImplemented', `factory agent "${agent.name}" built no runnable definition: ${reason}`);
    let built: BuiltAgent | undefined;
    try {
      built = await build(agent, caller, deps.factoryBuildTimeoutMs ?? 10_000);
    } catch (error) {
      throw unrunnable(`the factory threw (${(error as Error)?.message ?? 'unknown error'})`);
    }
    if (built === undefined) throw unrunnable('the factory did not finish in time');
    const result = definitionFromBuild(agent.name, built);
    if ('problem' in result) throw unrunnable(result.problem);
    return result.definition;
  }

  async function compile(caller: Caller, definition: AgentDefinition): Promise<ValidationReport> {
    const mcpReferences = definition.tools.filter((tool) => tool.startsWith(MCP_REFERENCE_PREFIX));
    const knowledgeReferences = definition.tools.filter((tool) => tool.startsWith(KNOWLEDGE_REFERENCE_PREFIX));
    const none = Promise.resolve(new Map<string, McpReferenceCheck>());
    const [stored, existingSkills, mcpTools, knowledgeTools] = await Promise.all([
      repository.callEdges(caller.tenantId),
      definition.skills.length ? deps.findSkills(caller, definition.skills) : Promise.resolve(new Set<string>()),
      mcpReferences.length ? deps.checkMcpTools(caller, mcpReferences) : none,
      knowledgeReferences.length ? deps.checkKnowledgeTools(caller, knowledgeReferences) : none,
    ]);
    const callEdges = new Map(stored);
    for (const [name, agent] of codeAgents) {
      callEdges.set(name, agent.kind === 'declarative' ? agent.definition.agents : []);
    }
    return validateDefinition(definition, {
      catalog,
      maxSkillsPerAgent: deps.maxSkillsPerAgent,
      knownAgents: new Set(callEdges.keys()),
      callEdges,
      existingSkills,
      referencedTools: new Map([...mcpTools, ...knowledgeTools]),
      nameTakenBy: codeAgents.has(definition.name) ? 'code' : stored.has(definition.name) ? 'database' : null,
    });
  }

  /** Throws 400 with the report's errors when the definition does not compile. */
  async function ensureCompiles(caller: Caller, definition: AgentDefinition) {
    const report = await compile(caller, definition);
    const errors: FieldError[] = report.messages
      .filter((message) => message.severity === 'Error' && message.code !== 'name_conflict')
      .map(({ path, message, code }) => ({ path, message, code }));
    if (errors.length) throw validationError(`agent "${definition.name}" failed validation`, errors);
  }

  /** The definition a run uses now (or the stored `version` asked for), with its version (null for code agents). */
  async function resolve(caller: Caller, name: string, version?: number): Promise<{ definition: AgentDefinition; version: number | null }> {
    const code = codeAgents.get(name);
    if (version !== undefined) {
      // A deleted agent's versions are not run.
      const stored = code
        ? undefined
        : (await requireStored(caller, name)) && (await repository.getVersions(caller.tenantId, name, [version])).get(version);
      if (!stored) throw notFound(`version ${version} of agent "${name}" not found`);
      return { definition: stored.definition, version: stored.version };
    }
    if (code?.kind === 'declarative') return { definition: code.definition, version: null };
    if (code?.kind === 'factory') return { definition: await buildDefinition(code, caller), version: null };
    const stored = await requireStored(caller, name);
    return { definition: stored.definition, version: stored.version };
  }

  const rejectCodeAgent = (name: string, action: string) => {
    if (codeAgents.has(name)) throw conflict(`"${name}" is a code-defined agent and cannot be ${action} through the API`);
  };

  const requireStored = async (caller: Caller, name: string) => {
    const agent = await repository.getCurrent(caller.tenantId, name);
    if (!agent) throw notFound(`agent "${name}" not found`);
    return agent;
  };

  return {
    async list(caller: Caller): Promise<AgentDescriptor[]> {
      const stored = await repository.listCurrent(caller.tenantId);
      const fromDatabase = stored
        .filter((agent) => !codeAgents.has(agent.definition.name))
        .map((agent): AgentDescriptor => ({
          name: agent.definition.name,
          description: agent.definition.description,
          origin: 'Database',
          model: { provider: agent.definition.model.provider, model: agent.definition.model.model },
          version: agent.version,
          updatedAt: agent.updatedAt,
        }));
      return [...[...codeAgents.values()].map(codeDescriptor), ...fromDatabase].sort(byName);
    },

    async get(caller: Caller, name: string): Promise<AgentDetail> {
      const code = codeAgents.get(name);
      if (code?.kind === 'declarative') {
        return {
          name,
          origin: 'Code',
          isEditable: false,
          definition: { definition: code.definition },
          factoryInstructions: null,
          catalog: summaryOf(code.definition),
        };
      }
      if (code?.kind === 'factory') {
        return {
          name,
          origin: 'Code',
          isEditable: false,
          definition: null,
          factoryInstructions: await readFactoryInstructions(code, caller),
          catalog: { description: code.description, model: null, tools: [], skills: [], agents: [] },
        };
      }
      const stored = await requireStored(caller, name);
      const { updatedAt: _updatedAt, ...record } = stored;
      return {
        name,
        origin: 'Database',
        isEditable: true,
        definition: record,
        factoryInstructions: null,
        catalog: summaryOf(stored.definition),
      };
    },

    async create(caller: Caller, definition: AgentDefinition): Promise<AgentDefinitionRecord> {
      rejectCodeAgent(definition.name, 'created');
      if (await repository.exists(caller.tenantId, definition.name)) {
        throw conflict(`an agent named "${definition.name}" already exists`);
      }
      await ensureCompiles(caller, definition);
      const created = await repository.insertFirst(caller.tenantId, definition, caller.actor);
      if (!created) throw conflict(`an agent named "${definition.name}" already exists`);
      await deps.changed(created.change);
      return created.result;
    },

    async update(caller: Caller, name: string, definition: AgentDefinition): Promise<AgentDefinitionRecord> {
      if (definition.name !== name) {
        throw validationError(`the body names "${definition.name}" but the path names "${name}"`, [
          { path: 'name', message: `must equal the name in the path ("${name}")` },
        ]);
      }
      rejectCodeAgent(name, 'updated');
      await requireStored(caller, name);
      await ensureCompiles(caller, definition);
      const updated = await repository.appendVersion(caller.tenantId, definition, caller.actor);
      if (!updated) throw notFound(`agent "${name}" not found`);
      await deps.changed(updated.change);
      return updated.result;
    },

    async delete(caller: Caller, name: string): Promise<void> {
      rejectCodeAgent(name, 'deleted');
      const deleted = await repository.delete(caller.tenantId, name);
      if (!deleted) throw notFound(`agent "${name}" not found`);
      await deps.changed(deleted.change);
    },

    validate: compile,

    async versions(caller: Caller, name: string): Promise<AgentDefinitionRecord[]> {
      if (codeAgents.has(name)) throw notFound(`agent "${name}" is code-defined and has no version history`);
      const versions = await repository.listVersions(caller.tenantId, name);
      if (versions.length === 0) throw notFound(`agent "${name}" not found`);
      return versions;
    },

    /**
     * Appends the old content as a new version. The old definition is not re-validated: rollback is
     * the way back to a known state, and a reference that has since disappeared shows at run time.
     */
    async rollback(caller: Caller, name: string, version: number): Promise<AgentDefinitionRecord> {
      rejectCodeAgent(name, 'rolled back');
      await requireStored(caller, name);
      const target = (await repository.getVersions(caller.tenantId, name, [version])).get(version);
      if (!target) throw notFound(`version ${version} of agent "${name}" not found`);
      const appended = await repository.appendVersion(caller.tenantId, target.definition, caller.actor);
      if (!appended) throw notFound(`agent "${name}" not found`);
      await deps.changed(appended.change);
      return appended.result;
    },

    async diff(caller: Caller, name: string, left: number, right: number) {
      if (codeAgents.has(name)) throw notFound(`agent "${name}" is code-defined and has no versions`);
      await requireStored(caller, name);
      const found = await repository.getVersions(caller.tenantId, name, [left, right]);
      const missing = [...new Set([left, right])].filter((version) => !found.has(version));
      if (missing.length) {
        throw new HangarError(
          'notFound',
          `${missing.length === 1 ? 'version' : 'versions'} ${missing.join(' and ')} of agent "${name}" not found`,
          {
            missingVersions: missing,
          },
        );
      }
      return { left: found.get(left)!, right: found.get(right)! };
    },

    /** What the run pre-flight check computes, for the agent's primary model. */
    async estimate(
      caller: Caller,
      name: string,
      messages: Array<{ role: string; content: string }>,
      parameters: ReadonlyMap<string, string>,
    ): Promise<PromptEstimate> {
      const { definition } = await resolve(caller, name);
      const tokens = await countPromptTokens(renderInstructions(definition.instructions, parameters), messages);
      return estimatePrompt(tokens, catalog.contextWindow(definition.model.provider, definition.model.model), deps.reserveRatio);
    },

    resolve,
    models: () => catalog.models(),
    tools: async (caller: Caller) => [...catalog.tools(), ...(await deps.mcpTools(caller))],
  };
}

export type AgentRegistryService = ReturnType<typeof createAgentRegistryService>;
