import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXIT_WITH_PARENT } from './distributed.js';
import { PGLITE_MIGRATED_DIR } from './pglite-seed.js';
import { TEST_BUILD_DIR, TEST_TOKEN } from './hangar.js';
import { freePort } from './ports.js';
import { timedStartUp } from './start-up-clock.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface AllInOneProcess {
  url: string;
  child: ChildProcess;
  /** The last 4000 characters it wrote on stdout and stderr. */
  output(): string;
  /** Milliseconds from spawn until `GET /api/meta` first answered 200. */
  startupMs: number;
  /** Resolves with the exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL: the process dies as in a crash, with nothing cleaned up. */
  kill(): Promise<void>;
}

type SpawnOptions = {
  dataDir?: string;
  env?: Record<string, string>;
  /** Extra node flags (a CPU profile, say). */
  nodeArgs?: string[];
  /**
   * What to run, from the repository root: the TypeScript sources through tsx, or built JavaScript
   * (`dist/all-in-one/main.js`). By default the run's build where the run made one (HANGAR_TEST_BUILT,
   * set by tools/test-build.ts), else the sources.
   */
  entry?: string;
};

const PORT_ATTEMPTS = 3;

/**
 * Starts the all-in-one (`services/all-in-one/src/main.ts`, what `npm start` runs, or the run's build of it), or `entry`, in its own process,
 * on a fresh embedded data directory unless `env` points it elsewhere; resolves once `/api/meta` answers.
 * The gateway's port is free when chosen, yet another process (its ephemeral gRPC ports, say) may
 * take it before Hangar listens: then it starts again on another port.
 */
export function spawnAllInOne(options: SpawnOptions = {}): Promise<AllInOneProcess> {
  return timedStartUp(async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await spawnOnce(options);
      } catch (error) {
        const portTaken = /EADDRINUSE/.test((error as Error).message) && !options.env?.HANGAR__Gateway__Port;
        if (!portTaken || attempt === PORT_ATTEMPTS) throw error;
      }
    }
  });
}

/**
 * A new embedded data directory gets a copy of the run's migrated cluster (tools/pglite-migrated-seed.ts),
 * as a store made by initdb and every migration would hold; one the test started on before keeps its data.
 */
function startFromMigratedCluster(dataDir: string, env: Record<string, string>) {
  const embedded = !env.HANGAR__Stores__Postgres__ConnectionString && !env.HANGAR__Stores__Embedded__DataDir;
  if (!embedded || !existsSync(PGLITE_MIGRATED_DIR) || (existsSync(dataDir) && readdirSync(dataDir).length > 0)) return;
  cpSync(PGLITE_MIGRATED_DIR, dataDir, { recursive: true });
}

async function spawnOnce(options: SpawnOptions): Promise<AllInOneProcess> {
  const port = await freePort();
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'hangar-process-'));
  startFromMigratedCluster(dataDir, options.env ?? {});
  const started = performance.now();
  // Plain JavaScript starts in a fraction of tsx's time, which compiles every source in each process.
  const entry =
    options.entry ?? (process.env.HANGAR_TEST_BUILT ? join(TEST_BUILD_DIR, 'all-in-one/main.js') : 'services/all-in-one/src/main.ts');
  const typescriptLoader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  // One process (node itself, not the tsx CLI's wrapper), so a signal reaches Hangar itself and SIGKILL really kills it.
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', EXIT_WITH_PARENT, ...typescriptLoader, entry], {
    cwd: ROOT,
    // HANGAR_TEST_CHILD_OUTPUT=1 shows the process's own logs when a test needs debugging.
    stdio: process.env.HANGAR_TEST_CHILD_OUTPUT ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      HANGAR__Gateway__Port: String(port),
      HANGAR__Stores__Embedded__DataDir: dataDir,
      HANGAR__Hangar__Api__AuthToken: TEST_TOKEN,
      HANGAR__Logging__Level: 'warn',
      ...options.env,
    },
  });
  // The last lines it wrote, so a process that fails to start says why in the test's error.
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (true) {
    if (child.exitCode !== null) throw new Error(`all-in-one exited with ${child.exitCode}; its last output:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`all-in-one did not answer /api/meta within 60 s; its last output:\n${output}`);
    }
    try {
      if ((await fetch(`${url}/api/meta`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
  };
  return {
    url,
    child,
    output: () => output,
    startupMs: performance.now() - started,
    exited,
    stop: () => signal('SIGTERM'),
    kill: () => signal('SIGKILL'),
  };
}
