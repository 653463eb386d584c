import type { AgentDefinition, ValidationMessage, ValidationReport } from '@hangar/contracts';
import type { Catalog } from './catalog.js';
import type { McpReferenceCheck } from './tool-servers/tool-server.service.js';

export interface ValidationInputs {
  catalog: Catalog;
  maxSkillsPerAgent: number;
  /** Names of every agent callable by this tenant (code and stored). */
  knownAgents: Set<string>;
  /** Callable-agent edges of every other agent of this tenant (code and stored). */
  callEdges: Map<string, string[]>;
  /** The subset of the definition's skills that exist. */
  existingSkills: Set<string>;
  /** What a fresh lookup said of each `mcp:<server>/<tool>` and `knowledge:<collection>` tool. */
  referencedTools: Map<string, McpReferenceCheck>;
  /** How the name relates to existing agents: a code agent can never be stored under it. */
  nameTakenBy: 'code' | 'database' | null;
}

const error = (code: string, path: string, message: string): ValidationMessage => ({ severity: 'Error', code, path, message });
const warning = (code: string, path: string, message: string): ValidationMessage => ({ severity: 'Warning', code, path, message });

/** Compiles a definition against the catalogs and the call graph. Never contacts a provider. */
export function validateDefinition(definition: AgentDefinition, inputs: ValidationInputs): ValidationReport {
  const messages: ValidationMessage[] = [];
  const { catalog } = inputs;

  if (inputs.nameTakenBy === 'code') {
    messages.push(error('name_conflict', 'name', `"${definition.name}" is a code-defined agent and cannot be stored`));
  } else if (inputs.nameTakenBy === 'database') {
    messages.push(warning('name_conflict', 'name', `an agent named "${definition.name}" is already stored; saving it is an update`));
  }

  const bindings = [
    { path: 'model', ref: definition.model },
    ...definition.model.fallbacks.map((ref, index) => ({ path: `model.fallbacks[${index}]`, ref })),
  ];
  for (const { path, ref } of bindings) {
    if (!catalog.hasProvider(ref.provider)) {
      messages.push(
        error('model_not_found', `${path}.provider`, `provider "${ref.provider}" is not configured (Providers:${ref.provider})`),
      );
      continue;
    }
    const listed = catalog.listedModels(ref.provider);
    if (listed.length > 0 && !listed.includes(ref.model)) {
      messages.push(
        warning('model_not_in_catalog', `${path}.model`, `model "${ref.model}" is not listed under Providers:${ref.provider}:Models`),
      );
    }
  }

  definition.tools.forEach((tool, index) => {
    const referenced = inputs.referencedTools.get(tool);
    if (referenced?.state === 'missing') messages.push(error('tool_not_found', `tools[${index}]`, `tool "${tool}": ${referenced.reason}`));
    else if (referenced?.state === 'unverified')
      messages.push(warning('tool_unverified', `tools[${index}]`, `tool "${tool}": ${referenced.reason}`));
    else if (!referenced && !catalog.hasTool(tool))
      messages.push(error('tool_not_found', `tools[${index}]`, `tool "${tool}" is not in the tool catalog`));
  });

  if (definition.skills.length > inputs.maxSkillsPerAgent) {
    messages.push(error('too_many_skills', 'skills', `at most ${inputs.maxSkillsPerAgent} skills per agent (Skills:MaxSkillsPerAgent)`));
  }
  definition.skills.forEach((skill, index) => {
    if (!inputs.existingSkills.has(skill)) messages.push(error('skill_not_found', `skills[${index}]`, `skill "${skill}" does not exist`));
  });

  definition.agents.forEach((agent, index) => {
    if (agent !== definition.name && !inputs.knownAgents.has(agent)) {
      messages.push(error('agent_not_found', `agents[${index}]`, `agent "${agent}" does not exist`));
    }
  });

  const cycle = findCycle(definition, inputs.callEdges);
  if (cycle) messages.push(error('call_graph_cycle', 'agents', `the call graph has a cycle: ${cycle.join(' -> ')}`));

  return { valid: !messages.some((message) => message.severity === 'Error'), messages };
}

/** A path from the definition back to itself through callable agents, if there is one. */
function findCycle(definition: AgentDefinition, edges: Map<string, string[]>): string[] | undefined {
  const graph = new Map(edges);
  graph.set(definition.name, definition.agents);
  const visited = new Set<string>();
  const walk = (name: string, path: string[]): string[] | undefined => {
    for (const next of graph.get(name) ?? []) {
      if (next === definition.name) return [...path, next];
      if (visited.has(next)) continue;
      visited.add(next);
      const found = walk(next, [...path, next]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(definition.name, [definition.name]);
}
