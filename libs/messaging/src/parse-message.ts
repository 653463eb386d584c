/** A message's JSON, or undefined when it is not JSON (a consumer then skips it rather than retrying it forever). */
export function parseMessage(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
