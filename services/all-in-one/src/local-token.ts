import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const LOCAL_TOKEN_FILE = '.hangar/auth-token';

/**
 * A trial install needs a credential but should not ship a well-known one: the first start
 * writes a random token to `.hangar/auth-token` (mode 600) and later starts reuse it.
 */
export function localAuthToken(path = LOCAL_TOKEN_FILE): string {
  if (existsSync(path)) {
    const token = readFileSync(path, 'utf8').trim();
    if (token.length >= 16) return token;
  }
  const token = randomBytes(24).toString('base64url');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  return token;
}
