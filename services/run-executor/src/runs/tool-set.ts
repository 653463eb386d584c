import { jsonSchema, tool, type ToolSet } from 'ai';
import { IMAGE_TOOL_NAME, KNOWLEDGE_REFERENCE_PREFIX, MCP_REFERENCE_PREFIX, type AgentDefinition } from '@hangar/contracts';
import type { ImageCharge } from '../images/image-pricing.js';
import type { ImageService } from '../images/image.service.js';
import { HangarError, type Caller, type HangarConfig } from '@hangar/platform';
import type { RunSkill, SkillGateway, ToolCatalog } from '../clients/ports.js';
import type { KnowledgeTools } from '../knowledge/knowledge-tools.js';
import type { McpTools } from '../mcp/mcp-tools.js';
import { BUILT_IN_EXECUTORS } from '../tools.js';
import { modelToolName } from './tool-names.js';

/** What a run's tools need of the run itself: its session, and where the images it draws are charged. */
export interface RunToolContext {
  sessionId?: string;
  signal: AbortSignal;
  chargeImages: (charge: ImageCharge) => void;
}

export interface ToolSetDeps {
  toolCatalog: ToolCatalog;
  /** Image generation, for the `generate_image` tool (present while Images:Enabled). */
  images?: Pick<ImageService, 'generate'>;
  skills: SkillGateway;
  mcp: Pick<McpTools, 'toolsFor'>;
  knowledge: Pick<KnowledgeTools, 'toolsFor'>;
  settings: Pick<HangarConfig, 'Tools' | 'Approvals'>;
}

/** What a run offers its model: tools, and the instructions of its skills for the system prompt. */
export interface RunTools {
  tools: ToolSet;
  skillInstructions: string | undefined;
}

/** A tool's execution kept back until a person approved the call. */
export type HeldTools = Record<string, (args: unknown, toolCallId: string, signal: AbortSignal) => Promise<unknown>>;

/**
 * Every tool of `tools` waits for a human decision (a voice turn with Voice:RequireApproval): the
 * model gets the tools without their execution, so its turn ends at a call, and the approvals
 * run the held execution of an approved call, as they run a catalog tool of Approvals:RequiredTools.
 */
export function holdForApproval(tools: ToolSet): { tools: ToolSet; held: HeldTools } {
  const held: HeldTools = {};
  const withheld: ToolSet = {};
  for (const [name, entry] of Object.entries(tools)) {
    const { execute, ...rest } = entry;
    withheld[name] = rest as ToolSet[string];
    if (execute)
      held[name] = (args, toolCallId, signal) => Promise.resolve(execute(args, { toolCallId, messages: [], abortSignal: signal }));
  }
  return { tools: withheld, held };
}

interface ImageToolInput {
  prompt?: unknown;
  size?: string;
  n?: number;
}

/** Asks a callable agent as a child run and returns what the model gets back. */
export type AskAgent = (agentName: string, message: string) => Promise<unknown>;

/** The tools a run's model may call: its catalog, MCP and knowledge tools, one tool per callable agent, and its skills' tools. */
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

    async toolsFor(caller: Caller, definition: AgentDefinition, askAgent: AskAgent, run: RunToolContext): Promise<RunTools> {
      const mcpReferences = definition.tools.filter((name) => name.startsWith(MCP_REFERENCE_PREFIX));
      const knowledgeReferences = definition.tools.filter((name) => name.startsWith(KNOWLEDGE_REFERENCE_PREFIX));
      const [catalog, skills, mcpTools, knowledgeTools] = await Promise.all([
        deps.toolCatalog(),
        deps.skills.forRun(caller, definition.skills),
        mcpReferences.length ? deps.mcp.toolsFor(caller, mcpReferences) : undefined,
        knowledgeReferences.length ? deps.knowledge.toolsFor(caller, knowledgeReferences) : undefined,
      ]);
      const tools: ToolSet = { ...skillTools(caller, skills), ...mcpTools, ...knowledgeTools };
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
        if (name === IMAGE_TOOL_NAME && entry && deps.images) {
          tools[name] = tool({
            description: entry.description,
            inputSchema: jsonSchema<Record<string, unknown>>(entry.inputSchema as never),
            execute: (input, { abortSignal }) =>
              drawImages(caller, deps.images!, input as ImageToolInput, {
                ...run,
                signal: abortSignal ? AbortSignal.any([run.signal, abortSignal]) : run.signal,
              }),
          });
          continue;
        }
        if (!entry || !BUILT_IN_EXECUTORS[name]) continue; // a reference that disappeared since the agent was saved
        const inputSchema = jsonSchema<Record<string, unknown>>(entry.inputSchema as never);
        // A tool that needs approval has no execute: the model's turn ends at its call, and the run
        // executes it (or not) once a human decided, outside the model call and its timeout.
        tools[name] = approvalRequired.has(name)
          ? tool({ description: entry.description, inputSchema })
          : tool({ description: entry.description, inputSchema, execute: (input) => runCatalogTool(name, input) });
      }
      return { tools, skillInstructions: skills.length ? skills.map(skillPrompt).join('\n\n') : undefined };
    },
  };

  /** `generate_image`: the images stored as attachments of the run's tenant (in its session), their charge added to the run. */
  async function drawImages(caller: Caller, images: Pick<ImageService, 'generate'>, input: ImageToolInput, run: RunToolContext) {
    const generated = await images.generate(
      caller,
      { prompt: String(input.prompt ?? ''), size: input.size, count: input.n, sessionId: run.sessionId },
      run.signal,
    );
    run.chargeImages(generated.charge);
    return {
      images: generated.images.map((image) => ({ attachmentId: image.id, fileName: image.fileName, mediaType: image.mediaType })),
      quantity: generated.charge.quantity,
      cost: generated.charge.cost,
      currency: generated.charge.currency,
    };
  }

  /** `read_resource` for the skills' resources, and one tool per script that may run now. */
  function skillTools(caller: Caller, skills: RunSkill[]): ToolSet {
    const tools: ToolSet = {};
    if (skills.some((skill) => skill.resourceNames.length)) {
      tools.read_resource = tool({
        description: 'Read a resource of one of your skills (the names are listed with each skill)',
        inputSchema: jsonSchema({
          type: 'object',
          properties: { skill: { type: 'string' }, name: { type: 'string' } },
          required: ['skill', 'name'],
          additionalProperties: false,
        } as never),
        execute: (input) => {
          const { skill, name } = input as { skill: string; name: string };
          // Only the agent's own skills: a model may name any skill of the tenant.
          if (!skills.some((offered) => offered.name === skill)) throw new HangarError('notFound', `this agent has no skill ${skill}`);
          return deps.skills.readResource(caller, skill, name);
        },
      });
    }
    for (const skill of skills) {
      for (const script of skill.runnableScripts) {
        tools[skillScriptToolName(skill.name, script)] = tool({
          description: `Run the script "${script}" of the skill "${skill.name}"; it gets args as its arguments and stdin as its input`,
          inputSchema: jsonSchema({
            type: 'object',
            properties: { args: { type: 'array', items: { type: 'string' } }, stdin: { type: 'string' } },
            additionalProperties: false,
          } as never),
          // A refusal (the grant was revoked meanwhile, no slot came free) reaches the model as a tool error.
          execute: (input, { abortSignal }) =>
            deps.skills.runScript(caller, skill.name, script, input as { args?: string[]; stdin?: string }, abortSignal),
        });
      }
    }
    return tools;
  }
}

/** A skill as the system prompt presents it. */
const skillPrompt = (skill: RunSkill) =>
  [
    `## Skill: ${skill.name}`,
    skill.description,
    skill.instructions,
    skill.resourceNames.length && `Resources (read_resource with skill "${skill.name}"): ${skill.resourceNames.join(', ')}`,
    skill.runnableScripts.length && `Scripts: ${skill.runnableScripts.map((script) => skillScriptToolName(skill.name, script)).join(', ')}`,
  ]
    .filter(Boolean)
    .join('\n');

/** `skill_<skill>_<script>` (API.md), made a model tool name. */
export const skillScriptToolName = (skillName: string, scriptName: string) => modelToolName(`skill_${skillName}_${scriptName}`);

export type ToolSets = ReturnType<typeof createToolSets>;

/** A tool result over `maxBytes` of UTF-8 (as JSON) reaches the model cut, with a note of what was cut. */
export function limitToolOutput(value: unknown, maxBytes: number | null): unknown {
  if (maxBytes === null) return value;
  const json = JSON.stringify(value ?? null);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes <= maxBytes) return value;
  const note = `…[truncated ${bytes} bytes]`;
  return cutUtf8(json, Math.max(0, maxBytes - Buffer.byteLength(note, 'utf8'))) + note;
}

/** `text` cut to at most `maxBytes` bytes of UTF-8, on a character boundary. */
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Back to the first byte of the character the cut splits (continuation bytes are 10xxxxxx).
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
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
