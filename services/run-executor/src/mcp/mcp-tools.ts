import { jsonSchema, tool, type ToolSet } from 'ai';
import { parseMcpReference } from '@hangar/contracts';
import { connectMcp, describeMcpError, HangarError, type Caller, type McpConnectSettings, type McpEndpoint } from '@hangar/platform';
import { hashedToolName, modelToolName } from '../runs/tool-names.js';
import { cutUtf8 } from '../runs/tool-set.js';

/** A tenant's tool server as a run uses it: where it answers, and the tools it listed at its last discovery. */
export interface McpServerBinding extends McpEndpoint {
  name: string;
  tools: Array<{ name: string; description: string; inputSchema: Record<string, unknown> }>;
  /** The resources it listed at its last discovery: the only ones its read_resource tool reads. */
  resources: Array<{ uri: string; name: string; description: string; mimeType: string | null }>;
}

/** The tenant's enabled tool server of that name, or undefined (unknown, disabled). */
export type ToolServerLookup = (caller: Caller, name: string) => Promise<McpServerBinding | undefined>;

export interface McpToolDeps extends McpConnectSettings {
  servers: ToolServerLookup;
  /** `Mcp:Enabled`: false offers no MCP tool (the references stay in the agents). */
  enabled: boolean;
  /** `Tools:DefaultTimeout`: connecting and calling, together. */
  timeoutMs: number;
  /** Cuts a result as every tool result is cut (`Tools:DefaultMaxOutputBytes`). */
  limitOutput: (value: unknown) => unknown;
  /** `Mcp:MaxResourceBytesPerResource`: one resource read is cut there. */
  maxResourceBytes: number;
  /** `Mcp:MaxResourceBytesTotal`: what one run reads of resources in all; reads past it are refused. */
  maxResourceBytesTotal: number;
}

/** `mcp__<server>__<tool>` (API.md), made a model tool name. */
export const mcpToolName = (server: string, toolName: string) => modelToolName(`mcp__${server}__${toolName}`);

/** The tool that reads a server's listed resources: `mcp__<server>__read_resource`. */
export const mcpResourceToolName = (server: string) => modelToolName(`mcp__${server}__read_resource`);

/** Resources named in the read tool's description, at most (the rest are still readable by uri). */
const DESCRIBED_RESOURCES = 50;

/** What one run has read of resources so far, against Mcp:MaxResourceBytesTotal. */
interface ResourceBudget {
  left: number;
}

/** Listed uris named in an error, at most. */
const NAMED_RESOURCES = 20;

/** What the model gets back from a tool call: its structured content, or its text (other parts named). */
function resultOf(result: { content?: unknown; structuredContent?: unknown }): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const parts = Array.isArray(result.content) ? (result.content as Array<{ type: string; text?: string; mimeType?: string }>) : [];
  return parts.map((part) => (part.type === 'text' ? part.text : `[${part.type}${part.mimeType ? ` ${part.mimeType}` : ''}]`)).join('\n');
}

/**
 * The tools of an agent's `mcp:<server>/<tool>` references: one lookup per server, tools as the
 * server listed them at its last discovery, and a read_resource tool for each such server that
 * lists resources. Each call connects, calls and closes within
 * Tools:DefaultTimeout; a server that is down or a tool that reports an error fails that call (the
 * model sees the error), not the run. A reference whose server or tool is gone is left out.
 */
export function createMcpTools(deps: McpToolDeps) {
  /**
   * Connects to the server, does `work` and closes, all within Tools:DefaultTimeout (and the run's
   * signal); a failure of the server becomes an `unavailable` naming `what` (a Hangar refusal passes).
   */
  async function withServer<T>(
    server: McpServerBinding,
    what: string,
    runSignal: AbortSignal | undefined,
    work: (client: Awaited<ReturnType<typeof connectMcp>>, options: { signal: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<T> {
    const deadline = AbortSignal.timeout(deps.timeoutMs);
    const signal = runSignal ? AbortSignal.any([runSignal, deadline]) : deadline;
    const options = { signal, timeout: deps.timeoutMs };
    let client: Awaited<ReturnType<typeof connectMcp>> | undefined;
    try {
      client = await connectMcp(server, deps, options);
      return await work(client, options);
    } catch (error) {
      if (error instanceof HangarError) throw error;
      if (deadline.aborted) throw new HangarError('unavailable', `${what} took longer than ${deps.timeoutMs} ms (Tools:DefaultTimeout)`);
      throw new HangarError('unavailable', `tool server ${server.name} could not be used: ${describeMcpError(error)}`);
    } finally {
      // Closed without holding the answer: a closing client can wait on the request it abandoned
      // (a tool still running past the deadline), which made a timed-out call last as long as the tool.
      void client?.close().catch(() => {});
    }
  }

  function call(server: McpServerBinding, toolName: string, input: unknown, runSignal: AbortSignal | undefined): Promise<unknown> {
    return withServer(server, `tool ${toolName} of ${server.name}`, runSignal, async (client, options) => {
      const result = await client.callTool({ name: toolName, arguments: input as Record<string, unknown> }, undefined, options);
      const output = resultOf(result as { content?: unknown; structuredContent?: unknown });
      if (result.isError) {
        const said = deps.limitOutput(typeof output === 'string' ? output : JSON.stringify(output));
        throw new HangarError('unavailable', `tool ${toolName} of ${server.name} failed: ${String(said)}`);
      }
      return deps.limitOutput(output);
    });
  }

  /**
   * Reads one listed resource: its text parts joined (a binary part is named, not read), cut at
   * Mcp:MaxResourceBytesPerResource and at what the run has left of Mcp:MaxResourceBytesTotal.
   */
  async function readResource(server: McpServerBinding, uri: string, budget: ResourceBudget, runSignal: AbortSignal | undefined) {
    if (!server.resources.some((resource) => resource.uri === uri)) {
      const some = server.resources.slice(0, NAMED_RESOURCES).map((resource) => resource.uri);
      throw new HangarError(
        'notFound',
        `${server.name} lists no resource ${String(deps.limitOutput(uri))}; read one of: ${some.join(', ')}${server.resources.length > some.length ? ', …' : ''}`,
      );
    }
    const spent = () =>
      new HangarError('tooManyRequests', `this run has read ${deps.maxResourceBytesTotal} bytes of resources (Mcp:MaxResourceBytesTotal)`);
    if (budget.left <= 0) throw spent();
    return withServer(server, `reading ${uri} of ${server.name}`, runSignal, async (client, options) => {
      const { contents } = await client.readResource({ uri }, options);
      const text = (contents as Array<{ text?: string; blob?: string; mimeType?: string }>)
        .map((part) => (typeof part.text === 'string' ? part.text : `[${part.mimeType ?? 'binary'} content, not read]`))
        .join('\n');
      // Read again after the read: reads running side by side share the budget.
      if (budget.left <= 0) throw spent();
      const limit = Math.min(deps.maxResourceBytes, budget.left);
      const cut = cutUtf8(text, limit);
      budget.left -= Buffer.byteLength(cut, 'utf8');
      if (cut === text) return deps.limitOutput({ uri, text });
      const setting = limit === deps.maxResourceBytes ? 'Mcp:MaxResourceBytesPerResource' : 'Mcp:MaxResourceBytesTotal';
      const truncated = `cut at ${Buffer.byteLength(cut, 'utf8')} of ${Buffer.byteLength(text, 'utf8')} bytes (${setting})`;
      return deps.limitOutput({ uri, text: cut, truncated });
    });
  }

  function resourceTool(server: McpServerBinding, budget: ResourceBudget) {
    const listed = server.resources
      .slice(0, DESCRIBED_RESOURCES)
      .map((resource) => `${resource.uri} (${resource.name}${resource.description ? `: ${resource.description}` : ''})`)
      .join('; ');
    return tool({
      description: `Read a resource of the tool server "${server.name}" by its uri. Resources: ${listed}`,
      inputSchema: jsonSchema<{ uri: string }>({
        type: 'object',
        properties: { uri: { type: 'string', description: 'The uri of a listed resource' } },
        required: ['uri'],
        additionalProperties: false,
      } as never),
      execute: (input, { abortSignal }) => readResource(server, String(input.uri ?? ''), budget, abortSignal),
    });
  }

  return {
    async toolsFor(caller: Caller, references: string[]): Promise<ToolSet> {
      if (!deps.enabled) return {};
      const wanted = new Map<string, string[]>();
      for (const reference of references) {
        const parsed = parseMcpReference(reference);
        if (parsed) wanted.set(parsed.server, [...(wanted.get(parsed.server) ?? []), parsed.tool]);
      }
      const tools: ToolSet = {};
      const servers = await Promise.all([...wanted.keys()].map((name) => deps.servers(caller, name)));
      // One budget per run, shared by every server's read tool.
      const budget: ResourceBudget = { left: deps.maxResourceBytesTotal };
      for (const server of servers) {
        if (!server) continue;
        let offered = false;
        for (const toolName of wanted.get(server.name) ?? []) {
          const listed = server.tools.find((candidate) => candidate.name === toolName);
          if (!listed) continue;
          offered = true;
          // Two references can read alike once cut to the allowed characters (servers a-b and a_b): the later one gets its own name.
          let name = mcpToolName(server.name, toolName);
          if (tools[name]) name = hashedToolName(name, `${server.name}/${toolName}`);
          tools[name] = tool({
            description: listed.description,
            inputSchema: jsonSchema<Record<string, unknown>>(listed.inputSchema as never),
            execute: (input, { abortSignal }) => call(server, toolName, input, abortSignal),
          });
        }
        // An agent that uses a server's tools may read what the server lists; after its tools, so
        // a tool of the server's own named read_resource keeps the documented name.
        if (offered && server.resources.length) {
          let name = mcpResourceToolName(server.name);
          if (tools[name]) name = hashedToolName(name, `${server.name}/resources`);
          tools[name] = resourceTool(server, budget);
        }
      }
      return tools;
    },
  };
}

export type McpTools = ReturnType<typeof createMcpTools>;
