import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createChannel, SERVICE_NAMES, type ServiceName } from '@hangar/platform';
import { createClient } from 'nice-grpc';
import { HealthDefinition } from 'nice-grpc-server-health';
import { mergeTrees, type ConfigTree } from './config-tree.js';
import { FIXTURE_CODE_AGENTS, httpRequest, TEST_BUILD_DIR, TEST_TOKEN, TEST_TOPOLOGY } from './hangar.js';
import { freePort, listening } from './ports.js';
import { dropSchemas, TEST_POSTGRES_URL, uniqueSchemaPrefix } from './postgres.js';
import { timedStartUp } from './start-up-clock.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Preloaded into every process a test spawns, so none outlives its test worker. */
export const EXIT_WITH_PARENT = fileURLToPath(new URL('./exit-with-parent.mjs', import.meta.url));
const DIRECTORIES: Record<ServiceName | 'Gateway', string> = {
  AgentRegistry: 'agent-registry',
  RunExecutor: 'run-executor',
  Session: 'session',
  Skill: 'skill',
  Attachment: 'attachment',
  Governance: 'governance',
  Knowledge: 'knowledge',
  Evaluation: 'evaluation',
  Gateway: 'gateway',
};

/** A service process; `Gateway#2`… and `RunExecutor#2`… are the gateways and run executors beyond the first. */
export type ProcessName = ServiceName | 'Gateway' | `Gateway#${number}` | `RunExecutor#${number}`;

export interface DistributedHangar {
  /** The first gateway. */
  url: string;
  /** Every gateway, the first one first. */
  urls: string[];
  /** The prefix of its service schemas (`<prefix>_runs`, `<prefix>_governance`, …), for tests that look at rows. */
  schemaPrefix: string;
  processes: Map<ProcessName, ChildProcess>;
  /** Resolves with each process's exit code. */
  exits: Map<ProcessName, Promise<number | null>>;
  /** Where a service answers gRPC (the first run executor, for RunExecutor). */
  addressOf(service: ServiceName): string;
  /** Each run executor's metrics port, the first one first, when the configuration sets Services:RunExecutor:MetricsPort. */
  runExecutorMetricsPorts: number[];
  /** What a process wrote so far, stdout and stderr (JSON log lines at the configured level). */
  output(name: ProcessName): string;
  /** Starts a process again (after it was killed) with the same settings and ports; it is not awaited until ready. */
  restart(name: ProcessName): void;
  /** SIGKILLs whatever still runs and drops the test schemas. */
  cleanup(): Promise<void>;
}

export interface DistributedOptions {
  /** Settings over the defaults, in the file every process reads (`HANGAR_CONFIG`). */
  config?: ConfigTree;
  /** HANGAR__ settings over the file, e.g. `HANGAR__Redis__ConnectionString`. */
  env?: Record<string, string>;
  readyTimeoutMs?: number;
  /** A PostgreSQL of the test's own (its schemas go with it); the machine's shared one by default. */
  postgresUrl?: string;
  /** How many gateway processes front the services (each on its own port); 1 by default. */
  gateways?: number;
  /**
   * How many run-executor processes share the job queue (each on its own port); 1 by default.
   * Gateway n calls run executor n (round robin when there are fewer), as `npm run start:distributed`
   * wires gateway A to executor 1 and B to 2; every other service calls the first.
   */
  runExecutors?: number;
  /** As Kubernetes runs it: `services/migrate` migrates first, and the services do not (`AutoApplyMigrations` false). */
  migrationJob?: boolean;
  /** Schemas of the caller's (it drops them); fresh ones by default. */
  schemaPrefix?: string;
  /**
   * The output of `npm run build` to run (`node <dir>/<service>/main.js`, quick to start) instead of
   * the sources under tsx. In the split project, the run's build by default (the fixture modules
   * the configuration names are compiled there too).
   */
  builtDir?: string;
}

/**
 * The distributed shape on this machine: every service its own process (`tsx services/<name>/src/main.ts`,
 * or the built `<name>/main.js`) on fresh schemas of the real PostgreSQL, the gateway in front. Resolves once every service answers
 * its gRPC health check SERVING and every gateway's `/readyz` is 200 (which does not ask the services).
 */
export function startDistributed(options: DistributedOptions = {}): Promise<DistributedHangar> {
  return timedStartUp(async () => {
    try {
      return await startOnce(options);
    } catch (error) {
      // A free port found here can be taken by another test's process before a service listens on it.
      if (!/EADDRINUSE/.test((error as Error).message)) throw error;
      return startOnce(options);
    }
  });
}

async function startOnce(options: DistributedOptions): Promise<DistributedHangar> {
  const schemaPrefix = options.schemaPrefix ?? uniqueSchemaPrefix();
  const dropsSchemas = !options.postgresUrl && !options.schemaPrefix;
  const ports = Object.fromEntries(await Promise.all(SERVICE_NAMES.map(async (name) => [name, await freePort()] as const)));
  const gatewayPorts = await Promise.all(Array.from({ length: options.gateways ?? 1 }, () => freePort()));
  const gatewayNames = gatewayPorts.map((_, index): ProcessName => (index === 0 ? 'Gateway' : `Gateway#${index + 1}`));
  const executorPorts = [
    ports.RunExecutor,
    ...(await Promise.all(Array.from({ length: (options.runExecutors ?? 1) - 1 }, () => freePort()))),
  ];
  const executorNames = executorPorts.map((_, index): ProcessName => (index === 0 ? 'RunExecutor' : `RunExecutor#${index + 1}`));
  // A metrics port set in the configuration is the first executor's; the others get ports of their own.
  const metricsPort = (options.config?.Services as ConfigTree | undefined)?.RunExecutor as ConfigTree | undefined;
  const runExecutorMetricsPorts =
    typeof metricsPort?.MetricsPort === 'number'
      ? [metricsPort.MetricsPort, ...(await Promise.all(executorPorts.slice(1).map(() => freePort())))]
      : [];
  /** Where a run executor listens, and where the process given it calls it. */
  const placingExecutor = (index: number) => ({
    HANGAR__Services__RunExecutor__Port: String(executorPorts[index]),
    HANGAR__Services__RunExecutor__Address: `127.0.0.1:${executorPorts[index]}`,
  });
  const executorMetrics = (index: number) =>
    runExecutorMetricsPorts.length ? { HANGAR__Services__RunExecutor__MetricsPort: String(runExecutorMetricsPorts[index]) } : {};
  const configDir = mkdtempSync(join(tmpdir(), 'hangar-distributed-'));
  const configFile = join(configDir, 'hangar.json');
  const defaults: ConfigTree = {
    Stores: { Postgres: { ConnectionString: options.postgresUrl ?? TEST_POSTGRES_URL, SchemaName: schemaPrefix } },
    Hangar: { Api: { AuthToken: TEST_TOKEN } },
    Providers: { demo: { Kind: 'Demo' } },
    CodeAgents: { Modules: [FIXTURE_CODE_AGENTS] },
    Logging: { Level: 'warn' },
  };
  writeFileSync(configFile, JSON.stringify(mergeTrees(defaults, options.config ?? {})));
  const env: Record<string, string> = {
    HANGAR_CONFIG: configFile,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${EXIT_WITH_PARENT}`.trim(),
    ...options.env,
  };
  const builtDir = options.builtDir ?? (TEST_TOPOLOGY === 'split' ? TEST_BUILD_DIR : undefined);
  const entry = (directory: string) =>
    builtDir ? [join(builtDir, directory, 'main.js')] : ['--import', 'tsx', `services/${directory}/src/main.ts`];
  for (const name of SERVICE_NAMES) {
    env[`HANGAR__Services__${name}__Port`] = String(ports[name]);
    env[`HANGAR__Services__${name}__Address`] = `127.0.0.1:${ports[name]}`;
  }
  if (options.migrationJob) {
    env.HANGAR__Stores__Postgres__AutoApplyMigrations = 'false';
    const job = spawn(process.execPath, entry('migrate'), {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: 'inherit',
    });
    const code = await new Promise((resolve) => job.once('exit', resolve));
    if (code !== 0) {
      rmSync(configDir, { recursive: true, force: true });
      if (dropsSchemas) await dropSchemas(schemaPrefix);
      throw new Error(`the migration entry exited with ${code}`);
    }
  }
  const processes = new Map<ProcessName, ChildProcess>();
  const exits = new Map<ProcessName, Promise<number | null>>();
  const outputs = new Map<ProcessName, string>();
  const spawnProcess = (name: ProcessName) => {
    const gateway = gatewayNames.indexOf(name);
    const executor = executorNames.indexOf(name);
    const directory = gateway >= 0 ? DIRECTORIES.Gateway : executor >= 0 ? DIRECTORIES.RunExecutor : DIRECTORIES[name as ServiceName];
    const child = spawn(process.execPath, entry(directory), {
      cwd: ROOT,
      env: {
        ...process.env,
        ...env,
        ...(gateway >= 0 && { HANGAR__Gateway__Port: String(gatewayPorts[gateway]), ...placingExecutor(gateway % executorPorts.length) }),
        ...(executor > 0 && { ...placingExecutor(executor), ...executorMetrics(executor) }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (!outputs.has(name)) outputs.set(name, '');
    const collect = (chunk: Buffer) => outputs.set(name, outputs.get(name) + chunk.toString());
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    processes.set(name, child);
    exits.set(
      name,
      new Promise((resolve) =>
        child.once('exit', (code) => {
          if (code) console.error(`${name} exited with ${code}: ${outputs.get(name)!.slice(-4000)}`);
          resolve(code);
        }),
      ),
    );
  };
  for (const name of [...SERVICE_NAMES, ...executorNames.slice(1), ...gatewayNames]) spawnProcess(name);
  const urls = gatewayPorts.map((port) => `http://127.0.0.1:${port}`);
  const cleanup = async () => {
    for (const child of processes.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(exits.values());
    rmSync(configDir, { recursive: true, force: true });
    if (dropsSchemas) await dropSchemas(schemaPrefix);
  };
  /**
   * Asked on a channel of its own each time: a channel refused before its server listened reconnects
   * only after a backoff of seconds. A bare TCP connect comes first: a gRPC channel and call for each
   * port every 100 ms took 1.6–1.9 s of this process's CPU per shape start.
   */
  const serving = async (port: number) => {
    if (!(await listening('127.0.0.1', port))) return false;
    const channel = createChannel(`127.0.0.1:${port}`);
    try {
      const answer = await createClient(HealthDefinition, channel).check({ service: '' }, { signal: AbortSignal.timeout(2000) });
      return answer.status === 1;
    } catch {
      return false; // not listening yet
    } finally {
      channel.close();
    }
  };
  const waiting = new Set([...SERVICE_NAMES.map((name) => ports[name]), ...executorPorts.slice(1)]);
  const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
  while (true) {
    for (const port of waiting) if (await serving(port)) waiting.delete(port);
    if (waiting.size === 0) {
      const ready = await Promise.all(urls.map((url) => httpRequest(url, 'GET', '/readyz', { token: null }).catch(() => undefined)));
      if (ready.every((answer) => answer?.status === 200)) break;
    }
    const exited = [...processes].find(([, child]) => child.exitCode !== null || child.signalCode !== null);
    if (exited || Date.now() > deadline) {
      await cleanup();
      throw new Error(
        exited
          ? `${exited[0]} exited while the distributed Hangar started: ${outputs.get(exited[0])!.slice(-2000)}`
          : 'the distributed Hangar did not become ready',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url: urls[0],
    urls,
    schemaPrefix,
    processes,
    exits,
    addressOf: (service) => `127.0.0.1:${ports[service]}`,
    runExecutorMetricsPorts,
    output: (name) => outputs.get(name) ?? '',
    restart: spawnProcess,
    cleanup,
  };
}
