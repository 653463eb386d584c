import { createHash } from 'node:crypto';

/** Model tool names allow `[A-Za-z0-9_-]` and 64 characters. */
const MAX_TOOL_NAME = 64;
const HASH_CHARACTERS = 8;

/** API.md's rule for the names Hangar makes: characters outside `[A-Za-z0-9_]` become `_`; over 64, cut with an 8-character hash. */
export function modelToolName(raw: string): string {
  const name = raw.replace(/[^A-Za-z0-9_]/g, '_');
  return name.length <= MAX_TOOL_NAME ? name : hashedToolName(name, name);
}

/** `name` cut to leave room for `_` and 8 hex characters of the hash of `of`. */
export function hashedToolName(name: string, of: string): string {
  const hash = createHash('sha256').update(of).digest('hex').slice(0, HASH_CHARACTERS);
  return `${name.slice(0, MAX_TOOL_NAME - HASH_CHARACTERS - 1)}_${hash}`;
}
