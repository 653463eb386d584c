import { execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { acceptsConnections, portOpen, postgresBinDir, redisServerBinary, systemUser } from '@hangar/testing';

/**
 * PostgreSQL, Redis and Kafka for `npm run start:distributed`, each on a port of 127.0.0.1 (their
 * usual ones by default): whatever already answers there is used as it is; what does not is
 * started from this machine's packages (Kafka from deploy/local/kafka.sh), with its files under
 * `.hangar/`, and stopped by `stop`.
 */
export interface LocalEngine {
  name: string;
  /** How Hangar's configuration names it (connection string or broker list). */
  address: string;
  /** Set when this process started the engine; an engine that already answered is left running. */
  stop?: () => Promise<unknown>;
}

const run = promisify(execFile);

/** PostgreSQL, with `database` created when missing. */
export async function localPostgres(root: string, port: number, database: string): Promise<LocalEngine> {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) throw new Error(`--database: ${database} is not a plain PostgreSQL name`);
  const stop = (await acceptsConnections(port)) ? undefined : await startPostgres(join(root, '.hangar/postgres'), port);
  const server = `postgres://postgres@127.0.0.1:${port}`;
  const client = new pg.Client({ connectionString: `${server}/postgres` });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) await client.query(`create database "${database}"`);
  } finally {
    await client.end();
  }
  return { name: 'PostgreSQL', address: `${server}/${database}`, stop };
}

/** A cluster of its own under `dir` (made once), trusting local connections as `postgres`; resolves to its stop. */
async function startPostgres(dir: string, port: number) {
  const bin = postgresBinDir();
  const data = join(dir, 'data');
  // initdb and the server refuse to run as root: as root they run as the `postgres` user.
  const owner = process.getuid?.() === 0 ? systemUser('postgres') : undefined;
  mkdirSync(dir, { recursive: true });
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const tool = (name: string, args: string[]) => run(join(bin, name), args, { ...owner, timeout: 120_000 });
  if (!existsSync(join(data, 'PG_VERSION')))
    await tool('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
  await tool('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start']);
  return () => tool('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
}

/** Redis; one started here keeps nothing on disk (Hangar keeps only live state there). */
export async function localRedis(root: string, port: number): Promise<LocalEngine> {
  const address = `redis://127.0.0.1:${port}`;
  if (await acceptsConnections(port)) return { name: 'Redis', address };
  const dir = join(root, '.hangar/redis');
  mkdirSync(dir, { recursive: true });
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  // Its own process group, so a Ctrl-C meant for the launcher does not stop it before the services.
  const server = spawn(redisServerBinary(), args, { stdio: 'ignore', detached: true });
  const exited = new Promise((resolve) => server.once('exit', resolve));
  await Promise.race([portOpen(port), exited.then(() => Promise.reject(new Error('redis-server exited at start')))]);
  return {
    name: 'Redis',
    address,
    stop: () => {
      server.kill('SIGTERM');
      return exited;
    },
  };
}

/** A single-node Kafka broker from deploy/local/kafka.sh (the first start fetches its jars). */
export async function localKafka(root: string, port: number): Promise<LocalEngine> {
  const address = `127.0.0.1:${port}`;
  if (await acceptsConnections(port)) return { name: 'Kafka', address };
  const kafka = (command: 'start' | 'stop') =>
    new Promise<void>((resolve, reject) => {
      // Detached for the same reason as Redis: the broker it leaves running must not get the launcher's Ctrl-C.
      const script = spawn('bash', [join(root, 'deploy/local/kafka.sh'), command], {
        env: { ...process.env, HANGAR_KAFKA_PORT: String(port) },
        stdio: 'inherit',
        detached: true,
      });
      script.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`deploy/local/kafka.sh ${command} exited with ${code}`))));
    });
  await kafka('start');
  return { name: 'Kafka', address, stop: () => kafka('stop') };
}
