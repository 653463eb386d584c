import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './ports.js';
import { timedStartUp } from './start-up-clock.js';

/**
 * PostgreSQL and Redis servers of a test's own, on free ports in temp dirs, that the test may
 * kill, restart and stop (engine-fault tests; never the machine's shared servers). A machine
 * without the binaries gets them from apt, as a fresh CI machine needs.
 */
export interface PrivateEngine {
  url: string;
  port: number;
  /** SIGKILLs the server (for PostgreSQL its postmaster) and resolves once the port refuses connections. */
  kill9(): Promise<void>;
  /** Starts the server again after kill9 (PostgreSQL recovers from its crash first). */
  start(): Promise<void>;
  /** Stops the server for good and removes its files. */
  stop(): Promise<void>;
}

export interface PrivatePostgres extends PrivateEngine {
  /** `pg_ctl restart -m fast`: sessions are terminated (57P01), the server is back when it resolves. */
  restartFast(): Promise<void>;
}

const run = promisify(execFile);
const APT_INSTALL = fileURLToPath(new URL('../../../deploy/local/apt-install.sh', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'hangar-pg-'));
  const data = join(dir, 'data');
  // initdb and the server refuse to run as root: as root they run as the `postgres` user.
  const owner = process.getuid?.() === 0 ? systemUser('postgres') : undefined;
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const pg = (tool: string, args: string[]) => run(join(bin, tool), args, { ...owner, cwd: dir, timeout: 60_000 });
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const start = async () => {
    // After a kill -9 the old backends leave a moment later; until then the server refuses to start.
    for (let attempt = 1; ; attempt++) {
      try {
        await pg('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', serverOptions, '-w', '-t', '60', 'start']);
        return;
      } catch (error) {
        if (attempt >= 20) throw new Error(`private PostgreSQL did not start: ${(error as Error).message}\n${serverLog(dir)}`);
        await sleep(250);
      }
    }
  };
  await timedStartUp(async () => {
    await pg('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    await start();
  });
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async kill9() {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      await portClosed(port);
    },
    start,
    async restartFast() {
      await pg('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-m', 'fast', '-w', '-t', '60', 'restart']);
    },
    async stop() {
      await pg('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startPrivateRedis(): Promise<PrivateEngine> {
  const server = redisServerBinary();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'hangar-redis-'));
  let child: ChildProcess | undefined;
  let exited: Promise<unknown> = Promise.resolve();
  const start = async () => {
    const spawned = spawn(server, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
      stdio: 'ignore',
    });
    child = spawned;
    exited = new Promise((resolve) => spawned.once('exit', resolve));
    await portOpen(port);
  };
  const kill9 = async () => {
    child?.kill('SIGKILL');
    await exited;
    await portClosed(port);
  };
  await timedStartUp(start);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill9,
    start,
    async stop() {
      await kill9();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** redis-server: on PATH, else installed from apt. */
export function redisServerBinary(): string {
  const server = binaryOnPath('redis-server') ?? (aptInstall(['redis-server']), binaryOnPath('redis-server'));
  if (!server) throw new Error('redis-server is not installed and apt could not install it');
  return server;
}

/** The directory of initdb and pg_ctl: on PATH, else Debian's /usr/lib/postgresql/<version>/bin, else installed from apt. */
export function postgresBinDir(): string {
  const find = () => {
    const onPath = binaryOnPath('pg_ctl');
    if (onPath && binaryOnPath('initdb')) return onPath.replace(/\/pg_ctl$/, '');
    const root = '/usr/lib/postgresql';
    const versions = existsSync(root) ? readdirSync(root).filter((version) => existsSync(join(root, version, 'bin', 'initdb'))) : [];
    const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
    return newest ? join(root, newest, 'bin') : undefined;
  };
  const found = find() ?? (aptInstall(['postgresql']), find());
  if (!found) throw new Error('PostgreSQL (initdb, pg_ctl) is not installed and apt could not install it');
  return found;
}

function binaryOnPath(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Debian packages through deploy/local/apt-install.sh: one installer at a time, whichever test asks. */
function aptInstall(packages: string[]) {
  execFileSync(APT_INSTALL, packages, { stdio: 'inherit', timeout: 900_000 });
}

/** A system user's ids (created when missing): initdb and postgres refuse to run as root, so as root they run as `postgres`. */
export function systemUser(name: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', name]);
    return { uid: id('-u'), gid: id('-g') };
  }
}

function serverLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'server.log'), 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return '';
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export const acceptsConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

export async function portOpen(port: number, timeoutMs = 20_000) {
  for (const deadline = Date.now() + timeoutMs; !(await acceptsConnections(port)); await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port}`);
  }
}

async function portClosed(port: number, timeoutMs = 20_000) {
  for (const deadline = Date.now() + timeoutMs; await acceptsConnections(port); await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`port ${port} still accepts connections`);
  }
}
