import { jsonSchema, tool, type ToolSet } from 'ai';
import type { AgentDefinition } from '@hangar/contracts';
import { HangarError, type HangarConfig } from '@hangar/platform';
import type { ToolCatalog } from '../clients/ports.js';
import { BUILT_IN_EXECUTORS } from '../tools.js';

export interface ToolSetDeps {
  toolCatalog: ToolCatalog;
  settings: Pick<HangarConfig, 'Tools' | 'Approvals'>;
}

/** Asks a callable agent as a child run and returns what the model gets back. */
export type AskAgent = (agentName: string, message: string) => Promise<unknown>;

/** The tools a run's model may call: its catalog tools and one tool per callable agent. */
export function createToolSets(deps: ToolSetDeps) {
  const { Tools } = deps.settings;
  const approvalRequired = new Set(deps.settings.Approvals.RequiredTools);

  function runCatalogTool(name: string, input: unknown): Promise<unknown> {
    return withTimeout(BUILT_IN_EXECUTORS[name](input as Record<string, unknown>), Tools.DefaultTimeout, name).then((output) =>
      limitToolOutput(output, Tools.DefaultMaxOutputBytes),
    );
  }

  return {
    runCatalogTool,
    needsApproval: (toolName: string) => approvalRequired.has(toolName),

    async toolsFor(definition: AgentDefinition, askAgent: AskAgent): Promise<ToolSet> {
      const catalog = await deps.toolCatalog();
      const tools: ToolSet = {};
      for (const agentName of definition.agents) {
        tools[agentToolName(agentName)] = tool({
          description: `Ask the agent "${agentName}" and get its answer`,
          inputSchema: jsonSchema({
            type: 'object',
            properties: { message: { type: 'string' } },
            required: ['message'],
            additionalProperties: false,
          } as never),
          execute: (input) => askAgent(agentName, String((input as { message: string }).message ?? '')),
        });
      }
      for (const name of definition.tools) {
        const entry = catalog.get(name);
        if (!entry || !BUILT_IN_EXECUTORS[name]) continue; // a reference that disappeared since the agent was saved
        const inputSchema = jsonSchema<Record<string, unknown>>(entry.inputSchema as never);
        // A tool that needs approval has no execute: the model's turn ends at its call, and the run
        // executes it (or not) once a human decided, outside the model call and its timeout.
        tools[name] = approvalRequired.has(name)
          ? tool({ description: entry.description, inputSchema })
          : tool({ description: entry.description, inputSchema, execute: (input) => runCatalogTool(name, input) });
      }
      return tools;
    },
  };
}

export type ToolSets = ReturnType<typeof createToolSets>;

/** A tool result over `maxBytes` of UTF-8 (as JSON) reaches the model cut, with a note of what was cut. */
export function limitToolOutput(value: unknown, maxBytes: number | null): unknown {
  if (maxBytes === null) return value;
  const json = JSON.stringify(value ?? null);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes <= maxBytes) return value;
  const note = `…[truncated ${bytes} bytes]`;
  let cut = Buffer.from(json, 'utf8')
    .subarray(0, Math.max(0, maxBytes - Buffer.byteLength(note, 'utf8')))
    .toString('utf8');
  while (Buffer.byteLength(cut + note, 'utf8') > maxBytes) cut = cut.slice(0, -1); // a split character decodes wider
  return cut + note;
}

/** Tool names allow `[A-Za-z0-9_-]` only; agent names may also hold dots. */
const agentToolName = (agentName: string) => `call_${agentName.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);

function withTimeout<T>(work: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HangarError('unavailable', `tool ${name} took longer than ${ms} ms (Tools:DefaultTimeout)`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
