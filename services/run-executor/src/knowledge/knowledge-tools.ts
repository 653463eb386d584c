import { jsonSchema, tool, type ToolSet } from 'ai';
import { parseKnowledgeReference } from '@hangar/contracts';
import { HangarError, type Caller } from '@hangar/platform';
import { hashedToolName, modelToolName } from '../runs/tool-names.js';

/** The knowledge service as a run uses it. */
export interface KnowledgeGateway {
  /** The tenant's collection of that name with its description, or undefined when there is none. */
  describe(caller: Caller, collection: string): Promise<{ name: string; description: string } | undefined>;
  search(
    caller: Caller,
    collection: string,
    query: string,
    topK: number,
    signal?: AbortSignal,
  ): Promise<Array<{ documentName: string; chunk: number; score: number; text: string }>>;
}

export interface KnowledgeToolDeps {
  knowledge: KnowledgeGateway;
  /** `Tools:DefaultTimeout`, for each search. */
  timeoutMs: number;
  /** Cuts a result as every tool result is cut (`Tools:DefaultMaxOutputBytes`). */
  limitOutput: (value: unknown) => unknown;
}

/** `knowledge__<collection>`, made a model tool name. */
export const knowledgeToolName = (collection: string) => modelToolName(`knowledge__${collection}`);

const INPUT_SCHEMA = jsonSchema<{ query: string; topK?: number }>({
  type: 'object',
  properties: {
    query: { type: 'string', description: 'What to look for, in words' },
    topK: { type: 'integer', minimum: 1, description: 'How many passages at most (Knowledge:MaxResults caps it)' },
  },
  required: ['query'],
  additionalProperties: false,
} as never);

/**
 * One search tool per `knowledge:<collection>` reference of an agent, for collections that exist
 * when the run starts (a deleted one is left out, as a vanished MCP tool is). A search that fails
 * or outlasts Tools:DefaultTimeout fails that call (the model sees why), not the run.
 */
export function createKnowledgeTools(deps: KnowledgeToolDeps) {
  async function search(caller: Caller, collection: string, input: { query: string; topK?: number }, runSignal?: AbortSignal) {
    const deadline = AbortSignal.timeout(deps.timeoutMs);
    const signal = runSignal ? AbortSignal.any([runSignal, deadline]) : deadline;
    try {
      // A model's topK that is no whole number in 1..1000 asks for the default (Knowledge:MaxResults).
      const topK = Number.isInteger(input.topK) && input.topK! >= 1 && input.topK! <= 1000 ? input.topK! : 0;
      const hits = await deps.knowledge.search(caller, collection, String(input.query ?? ''), topK, signal);
      return deps.limitOutput(
        hits.map((hit) => ({ document: hit.documentName, chunk: hit.chunk, score: Number(hit.score.toFixed(4)), text: hit.text })),
      );
    } catch (error) {
      if (deadline.aborted) {
        throw new HangarError('unavailable', `the search of ${collection} took longer than ${deps.timeoutMs} ms (Tools:DefaultTimeout)`);
      }
      throw error;
    }
  }

  return {
    async toolsFor(caller: Caller, references: string[]): Promise<ToolSet> {
      const names = [...new Set(references.map(parseKnowledgeReference).filter((name): name is string => !!name))];
      const collections = await Promise.all(names.map((name) => deps.knowledge.describe(caller, name)));
      const tools: ToolSet = {};
      for (const collection of collections) {
        if (!collection) continue;
        // Collections a-b and a_b read alike once cut to the allowed characters: the later one gets its own name.
        let name = knowledgeToolName(collection.name);
        if (tools[name]) name = hashedToolName(name, collection.name);
        tools[name] = tool({
          description:
            `Search the knowledge collection "${collection.name}" for passages about a query; answers the nearest passages, best first` +
            (collection.description ? `. The collection: ${collection.description}` : ''),
          inputSchema: INPUT_SCHEMA,
          execute: (input, { abortSignal }) => search(caller, collection.name, input, abortSignal),
        });
      }
      return tools;
    },
  };
}

export type KnowledgeTools = ReturnType<typeof createKnowledgeTools>;
