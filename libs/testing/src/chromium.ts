import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../../deploy/local/chromium.sh', import.meta.url));
let found: Promise<string> | undefined;

/** This machine's Chromium, installed by deploy/local/chromium.sh when missing (CHROMIUM_PATH overrides). */
export function chromiumPath(): Promise<string> {
  if (process.env.CHROMIUM_PATH) return Promise.resolve(process.env.CHROMIUM_PATH);
  found ??= promisify(execFile)('bash', [SCRIPT], { timeout: 600_000 }).then(({ stdout }) => stdout.trim().split('\n').at(-1)!);
  return found;
}

/** Where the console's browser tests save a screenshot of each page (gitignored; CI keeps it as an artifact). */
export const CONSOLE_SCREENSHOTS = fileURLToPath(new URL('../../../.hangar/console-screenshots/', import.meta.url));
