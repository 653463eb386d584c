/** Agents name an MCP server's tool as `mcp:<server>/<tool>` (API.md "Tool servers (MCP) and exposure"). */
export const MCP_REFERENCE_PREFIX = 'mcp:';

export function parseMcpReference(reference: string): { server: string; tool: string } | undefined {
  if (!reference.startsWith(MCP_REFERENCE_PREFIX)) return undefined;
  const rest = reference.slice(MCP_REFERENCE_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  return { server: rest.slice(0, slash), tool: rest.slice(slash + 1) };
}
