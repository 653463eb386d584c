import { jsonSchema, tool, type ToolSet } from 'ai';
import { parseMcpReference } from '@hangar/contracts';
import { connectMcp, describeMcpError, HangarError, type Caller, type McpConnectSettings, type McpEndpoint } from '@hangar/platform';
import { hashedToolName, modelToolName } from '../runs/tool-names.js';

/** A tenant's tool server as a run uses it: where it answers, and the tools it listed at its last discovery. */
export interface McpServerBinding extends McpEndpoint {
  name: string;
  tools: Array<{ name: string; description: string; inputSchema: Record<string, unknown> }>;
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
}

/** `mcp__<server>__<tool>` (API.md), made a model tool name. */
export const mcpToolName = (server: string, toolName: string) => modelToolName(`mcp__${server}__${toolName}`);

/** What the model gets back from a tool call: its structured content, or its text (other parts named). */
function resultOf(result: { content?: unknown; structuredContent?: unknown }): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const parts = Array.isArray(result.content) ? (result.content as Array<{ type: string; text?: string; mimeType?: string }>) : [];
  return parts.map((part) => (part.type === 'text' ? part.text : `[${part.type}${part.mimeType ? ` ${part.mimeType}` : ''}]`)).join('\n');
}

/**
 * The tools of an agent's `mcp:<server>/<tool>` references: one lookup per server, tools as the
 * server listed them at its last discovery. Each call connects, calls and closes within
 * Tools:DefaultTimeout; a server that is down or a tool that reports an error fails that call (the
 * model sees the error), not the run. A reference whose server or tool is gone is left out.
 */
export function createMcpTools(deps: McpToolDeps) {
  async function call(server: McpServerBinding, toolName: string, input: unknown, runSignal: AbortSignal | undefined): Promise<unknown> {
    const deadline = AbortSignal.timeout(deps.timeoutMs);
    const signal = runSignal ? AbortSignal.any([runSignal, deadline]) : deadline;
    const options = { signal, timeout: deps.timeoutMs };
    let client: Awaited<ReturnType<typeof connectMcp>> | undefined;
    try {
      client = await connectMcp(server, deps, options);
      const result = await client.callTool({ name: toolName, arguments: input as Record<string, unknown> }, undefined, options);
      const output = resultOf(result as { content?: unknown; structuredContent?: unknown });
      if (result.isError) {
        const said = deps.limitOutput(typeof output === 'string' ? output : JSON.stringify(output));
        throw new HangarError('unavailable', `tool ${toolName} of ${server.name} failed: ${String(said)}`);
      }
      return deps.limitOutput(output);
    } catch (error) {
      if (error instanceof HangarError) throw error;
      if (deadline.aborted)
        throw new HangarError(
          'unavailable',
          `tool ${toolName} of ${server.name} took longer than ${deps.timeoutMs} ms (Tools:DefaultTimeout)`,
        );
      throw new HangarError('unavailable', `tool server ${server.name} could not be used: ${describeMcpError(error)}`);
    } finally {
      await client?.close().catch(() => {});
    }
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
      for (const server of servers) {
        if (!server) continue;
        for (const toolName of wanted.get(server.name) ?? []) {
          const listed = server.tools.find((candidate) => candidate.name === toolName);
          if (!listed) continue;
          // Two references can read alike once cut to the allowed characters (servers a-b and a_b): the later one gets its own name.
          let name = mcpToolName(server.name, toolName);
          if (tools[name]) name = hashedToolName(name, `${server.name}/${toolName}`);
          tools[name] = tool({
            description: listed.description,
            inputSchema: jsonSchema<Record<string, unknown>>(listed.inputSchema as never),
            execute: (input, { abortSignal }) => call(server, toolName, input, abortSignal),
          });
        }
      }
      return tools;
    },
  };
}

export type McpTools = ReturnType<typeof createMcpTools>;
