import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

/** runMain guards every process entry: a rejection nobody handled is logged and counted, and the process goes on. */

const ENTRY = fileURLToPath(new URL('./fixtures/rejecting-main.ts', import.meta.url));

it('counts an unhandled rejection instead of exiting, and reports the count when it stops', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', ENTRY], { timeout: 20_000 });
  const lines = stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  expect(lines.find((line) => line.msg.startsWith('unhandled promise rejection'))).toMatchObject({
    level: 50,
    err: { message: 'nobody catches this' },
  });
  // Exit code 0 (execFile rejects otherwise), after a graceful stop that reports the count.
  expect(lines.find((line) => line.msg === 'hangar rejecting stopped')).toMatchObject({ unhandledRejections: 1 });
});
