import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@hangar/testing';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BENCH_TOKEN = 'bench-token-0123456789abcdef';

export interface AllInOne {
  url: string;
  child: ChildProcess;
  /** Milliseconds from spawn until `GET /api/meta` first answered 200. */
  startupMs: number;
  stop(): Promise<void>;
}

/** Starts `services/all-in-one/src/main.ts` (what `npm start` runs) in its own process. */
export async function spawnAllInOne(options: { dataDir?: string; env?: Record<string, string> } = {}): Promise<AllInOne> {
  const port = await freePort();
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'hangar-bench-'));
  const started = performance.now();
  const child = spawn(`${ROOT}node_modules/.bin/tsx`, ['services/all-in-one/src/main.ts'], {
    cwd: ROOT,
    stdio: 'ignore',
    env: {
      ...process.env,
      HANGAR__Gateway__Port: String(port),
      HANGAR__Stores__Embedded__DataDir: dataDir,
      HANGAR__Hangar__Api__AuthToken: BENCH_TOKEN,
      HANGAR__Logging__Level: 'warn',
      ...options.env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (true) {
    if (child.exitCode !== null) throw new Error(`all-in-one exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('all-in-one did not answer /api/meta within 60 s');
    try {
      if ((await fetch(`${url}/api/meta`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const startupMs = performance.now() - started;
  return {
    url,
    child,
    startupMs,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
