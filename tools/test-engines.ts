import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { writePgliteSeed } from '../libs/testing/src/pglite-seed.js';
import { listening } from '../libs/testing/src/ports.js';
import { writeMigratedPgliteSeed } from './pglite-migrated-seed.js';
import { startTestBuild } from './test-build.js';

/**
 * Vitest global setup. PostgreSQL and Redis are services of the machine; Kafka is not, so when no
 * broker answers at HANGAR_TEST_KAFKA_BROKERS (default 127.0.0.1:9092) the local single-node broker
 * is started with deploy/local/kafka.sh (jars from Maven Central) and stopped after the run. The
 * machine's PostgreSQL gets the pgvector extension (knowledge) from deploy/local/pgvector.sh when
 * it lacks it and the tests use it (no HANGAR_TEST_POSTGRES_URL pointing elsewhere). The image of
 * a fresh PGlite cluster that throw-away embedded stores start from is made once (libs/testing/src/pglite-seed.ts),
 * and one with every service's schema migrated, for the Hangars tests start in their own process, once per run.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = `${ROOT}deploy/local/kafka.sh`;
const PGVECTOR = `${ROOT}deploy/local/pgvector.sh`;

async function ensurePgvector() {
  if (process.env.HANGAR_TEST_POSTGRES_URL) return;
  const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
  try {
    await client.connect();
    const { rows } = await client.query(`select 1 from pg_available_extensions where name = 'vector'`);
    if (rows.length) return;
  } catch {
    return; // no PostgreSQL here: the tests that need it say so themselves
  } finally {
    await client.end().catch(() => {});
  }
  try {
    execFileSync('bash', [PGVECTOR], { stdio: 'inherit' });
  } catch (error) {
    // Not root, no network: the knowledge tests on PostgreSQL fail and say why; the rest run.
    console.warn(`deploy/local/pgvector.sh failed (${(error as Error).message}): knowledge on PostgreSQL answers 501`);
  }
}

/**
 * What the run needs is made side by side, not one after another (about 35 s before any test ran):
 * the broker starting in its own JVM, the PGlite images, and, when the split projects run, the build
 * their shapes run (tools/test-build.ts, which their own global setup then only awaits).
 */
export default async function setup(project: TestProject) {
  if (project.vitest.projects.some((running) => running.name.startsWith('split'))) void startTestBuild().catch(() => {});
  const kafka = ensureKafka();
  await Promise.all([
    ensurePgvector(),
    writePgliteSeed().then(writeMigratedPgliteSeed),
    kafka.catch(() => {}), // awaited again below, so that its error is the setup's
  ]);
  return kafka;
}

/** Starts the local broker unless one answers; resolves with what stops it (nothing when it was there). */
async function ensureKafka(): Promise<(() => void) | undefined> {
  const configured = process.env.HANGAR_TEST_KAFKA_BROKERS;
  const [host, port] = (configured?.split(',')[0] ?? '127.0.0.1:9092').split(':');
  if (await listening(host, Number(port))) return undefined;
  if (configured) throw new Error(`no Kafka broker answers at ${configured} (HANGAR_TEST_KAFKA_BROKERS)`);
  const code = await new Promise((resolve) => spawn('bash', [SCRIPT, 'start'], { stdio: 'inherit' }).once('exit', resolve));
  if (code !== 0) throw new Error(`deploy/local/kafka.sh start exited with ${code}`);
  return () => execFileSync('bash', [SCRIPT, 'stop'], { stdio: 'inherit' });
}
