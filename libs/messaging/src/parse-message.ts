/** A message's JSON, or undefined when it is not JSON (a consumer then skips it rather than retrying it forever). */
export function parseMessage(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Whether a parsed message may be one of `types`: true when its `type` is one of them, and for a
 * message with no string `type` (the consumer's validation then reports it). Lets a consumer skip
 * the events it has no use for before validating them.
 */
export function namesEventOf(message: unknown, types: ReadonlySet<string>): boolean {
  const type = (message as { type?: unknown } | undefined)?.type;
  return typeof type !== 'string' || types.has(type);
}
