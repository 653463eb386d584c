import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SERVICE_NAMES, type ServiceName } from '@hangar/platform';
import { freePort, httpRequest } from '@hangar/testing';
// The token file `npm start` writes, so one `cat .hangar/auth-token` serves both shapes.
import { localAuthToken, LOCAL_TOKEN_FILE } from '../services/all-in-one/src/local-token.js';
import { localKafka, localPostgres, localRedis, type LocalEngine } from './local-engines.js';

/**
 * `npm run start:distributed [-- --gateway-ports 8080,8081 --database hangar --postgres-port 5432
 * --redis-port 6379 --kafka-port 9092]`: Hangar in its distributed shape on this machine.
 * PostgreSQL, Redis and Kafka are used where they answer on those ports and started where they do
 * not (tools/local-engines.ts); then every service runs as its own process from the TypeScript
 * sources, with two run executors and two gateways, gateway A calling run executor 1 and gateway B
 * run executor 2. Each process's output is prefixed with its name; the addresses are printed once
 * both gateways are ready. Ctrl-C (or SIGTERM) stops the gateways, then the services, then the
 * engines this started.
 *
 * The configuration is the trial one of `npm start` (config/all-in-one.yaml: the Demo provider,
 * the example code agents) unless HANGAR_CONFIG names another; HANGAR__ variables reach every process.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STOP_TIMEOUT_MS = 20_000;
const READY_TIMEOUT_MS = 180_000;

interface HangarProcess {
  name: string;
  /** Where it serves: the gateway's URL, a service's gRPC address. */
  address: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

const engines: LocalEngine[] = [];
const services: HangarProcess[] = [];
const gateways: HangarProcess[] = [];
const NAME_WIDTH = 'RunExecutor 2'.length;
let stopRequested = false;
let serving = false;
/** Thrown by the start when a stop was requested during it. */
class StopRequested extends Error {}

// The children have process groups of their own, so a terminal's Ctrl-C reaches only this process,
// which stops each of them once (a second signal ends a Hangar process at once) and in order.
// While starting, the start sequence notices the request between its steps.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopRequested) return;
    stopRequested = true;
    if (serving) void stopAll().then(() => process.exit(0));
  });
}

try {
  await start();
  serving = true;
  unlessStopRequested();
  printAddresses();
} catch (error) {
  if (!(error instanceof StopRequested)) console.error(`start:distributed: ${(error as Error).message}`);
  await stopAll();
  process.exit(stopRequested ? 0 : 1);
}

/** Throws StopRequested once Ctrl-C or SIGTERM came: called between the steps of the start. */
function unlessStopRequested() {
  if (stopRequested) throw new StopRequested();
}

async function start() {
  const { values } = parseArgs({
    options: {
      'gateway-ports': { type: 'string', default: '8080,8081' },
      database: { type: 'string', default: 'hangar' },
      'postgres-port': { type: 'string', default: '5432' },
      'redis-port': { type: 'string', default: '6379' },
      'kafka-port': { type: 'string', default: '9092' },
    },
  });
  const gatewayPorts = ports('--gateway-ports', values['gateway-ports']!, 2);
  const [postgresPort, redisPort, kafkaPort] = (['postgres-port', 'redis-port', 'kafka-port'] as const).map(
    (flag) => ports(`--${flag}`, values[flag]!, 1)[0],
  );
  for (const startEngine of [
    () => localPostgres(ROOT, postgresPort, values.database!),
    () => localRedis(ROOT, redisPort),
    () => localKafka(ROOT, kafkaPort),
  ]) {
    engines.push(await startEngine());
    unlessStopRequested();
  }
  const [postgres, redis, kafka] = engines;
  const servicePorts = new Map<ServiceName, number>();
  for (const name of SERVICE_NAMES) servicePorts.set(name, await freePort());
  const secondExecutorPort = await freePort();
  /** Where a service listens and where the others call it. */
  const placing = (name: ServiceName, port: number) => ({
    [`HANGAR__Services__${name}__Port`]: String(port),
    [`HANGAR__Services__${name}__Address`]: `127.0.0.1:${port}`,
  });
  const shared: Record<string, string> = {
    HANGAR_CONFIG: process.env.HANGAR_CONFIG ?? 'config/all-in-one.yaml',
    HANGAR__Hangar__Api__AuthToken: process.env.HANGAR__Hangar__Api__AuthToken ?? localAuthToken(),
    // Children write to pipes, where `auto` would choose JSON; on a terminal the lines are for reading.
    ...(process.stdout.isTTY && { HANGAR__Logging__Format: process.env.HANGAR__Logging__Format ?? 'pretty' }),
    HANGAR__Stores__Postgres__ConnectionString: postgres.address,
    HANGAR__Redis__ConnectionString: redis.address,
    HANGAR__Kafka__Brokers: kafka.address,
    ...Object.assign({}, ...SERVICE_NAMES.map((name) => placing(name, servicePorts.get(name)!))),
  };
  for (const name of SERVICE_NAMES) services.push(startProcess(name, directoryOf(name), `127.0.0.1:${servicePorts.get(name)}`, shared));
  gateways.push(
    startProcess('Gateway A', 'gateway', `http://127.0.0.1:${gatewayPorts[0]}`, {
      ...shared,
      HANGAR__Gateway__Port: String(gatewayPorts[0]),
    }),
  );
  await untilReady(gatewayPorts[0]);

  // Only once the first run executor has migrated its schema: two processes creating one schema at once collide.
  const callingSecondExecutor = { ...shared, ...placing('RunExecutor', secondExecutorPort) };
  services.push(startProcess('RunExecutor 2', 'run-executor', `127.0.0.1:${secondExecutorPort}`, callingSecondExecutor));
  gateways.push(
    startProcess('Gateway B', 'gateway', `http://127.0.0.1:${gatewayPorts[1]}`, {
      ...callingSecondExecutor,
      HANGAR__Gateway__Port: String(gatewayPorts[1]),
    }),
  );
  await untilReady(gatewayPorts[1]);
}

/** `count` TCP ports, comma-separated, from a flag. */
function ports(flag: string, text: string, count: number): number[] {
  const parsed = text.split(',').map(Number);
  if (parsed.length !== count || !parsed.every((port) => Number.isInteger(port) && port > 0 && port < 65536)) {
    throw new Error(`${flag} takes ${count === 1 ? 'a port' : `${count} ports, comma-separated`} (got ${text})`);
  }
  return parsed;
}

function printAddresses() {
  const line = (name: string, address: string, detail: string) => `  ${name.padEnd(NAME_WIDTH)}  ${address.padEnd(40)}  ${detail}`;
  const token = process.env.HANGAR__Hangar__Api__AuthToken ? 'HANGAR__Hangar__Api__AuthToken' : `the contents of ${LOCAL_TOKEN_FILE}`;
  console.log(
    [
      '',
      'Hangar is serving, each service in its own process:',
      line(gateways[0].name, gateways[0].address, `pid ${gateways[0].child.pid}, calls RunExecutor`),
      line(gateways[1].name, gateways[1].address, `pid ${gateways[1].child.pid}, calls RunExecutor 2`),
      ...services.map((service) => line(service.name, service.address, `pid ${service.child.pid}, gRPC`)),
      ...engines.map((engine) => line(engine.name, engine.address, engine.stop ? 'started here' : 'was already running')),
      `Bearer token: ${token}. Ctrl-C stops every process above that was started here.`,
      '',
    ].join('\n'),
  );
}

/** `services/<directory>` of a service: AgentRegistry → agent-registry. */
function directoryOf(name: ServiceName) {
  return name.replace(/(?<=[a-z])(?=[A-Z])/g, '-').toLowerCase();
}

function startProcess(name: string, directory: string, address: string, env: Record<string, string>): HangarProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', `services/${directory}/src/main.ts`], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const prefix = `${name.padEnd(NAME_WIDTH)} |`;
  for (const stream of [child.stdout!, child.stderr!])
    createInterface({ input: stream }).on('line', (text) => console.log(`${prefix} ${text}`));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      console.log(`${prefix} exited (${signal ?? `code ${code}`})`);
      resolve(code);
    }),
  );
  return { name, address, child, exited };
}

/**
 * Until the gateway on `port` answers /readyz 200 (its own readiness: a service it calls may still be
 * starting, and its routes answer 503 until then); fails when a process exits first.
 */
async function untilReady(port: number) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    unlessStopRequested();
    const gone = [...services, ...gateways].find((hangar) => hangar.child.exitCode !== null);
    if (gone) throw new Error(`${gone.name} exited with code ${gone.child.exitCode} before Hangar was ready (its output is above)`);
    const ready = await httpRequest(`http://127.0.0.1:${port}`, 'GET', '/readyz', { token: null }).catch(() => undefined);
    if (ready?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the gateway on port ${port} was not ready within ${READY_TIMEOUT_MS / 1000} s`);
}

/** Gateways first, so no request reaches a stopping service; then the services; then the engines this started. */
async function stopAll() {
  for (const group of [gateways, services]) await Promise.all(group.map(stopProcess));
  for (const engine of engines.reverse()) {
    await engine.stop?.().catch((error) => console.error(`stopping ${engine.name}: ${(error as Error).message}`));
  }
}

async function stopProcess({ child, exited }: HangarProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const killLater = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(killLater);
}
