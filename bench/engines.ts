import { execFileSync } from 'node:child_process';
import { TEST_KAFKA_BROKERS, TEST_POSTGRES_URL, TEST_REDIS_URL, uniqueSchemaPrefix } from '@hangar/testing';

/**
 * The engines a bench runs Hangar on: PGlite and in-process messaging, or with BENCH_ENGINES=real
 * PostgreSQL, Redis and Kafka under a prefix of their own (the local Kafka broker is started by
 * deploy/local/kafka.sh when none answers).
 */
export function benchEngines() {
  const real = process.env.BENCH_ENGINES === 'real';
  const schemaPrefix = uniqueSchemaPrefix();
  if (real) execFileSync('bash', ['deploy/local/kafka.sh', 'start'], { stdio: 'inherit' });
  const env: Record<string, string> = real
    ? {
        HANGAR__Stores__Postgres__ConnectionString: TEST_POSTGRES_URL,
        HANGAR__Stores__Postgres__SchemaName: schemaPrefix,
        HANGAR__Redis__ConnectionString: TEST_REDIS_URL,
        HANGAR__Redis__ChannelPrefix: `${schemaPrefix}:`,
        HANGAR__Kafka__Brokers: TEST_KAFKA_BROKERS.join(','),
        HANGAR__Kafka__TopicPrefix: `${schemaPrefix}.`,
      }
    : {};
  return { real, name: real ? 'PostgreSQL, Redis, Kafka' : 'PGlite, in-process messaging', schemaPrefix, env };
}

/**
 * What a bench runs of the all-in-one (BENCH_SOURCE overrides the bench's default): `built`, the
 * JavaScript of `npm run build` (built here first), as a deployment runs it; or `tsx`, the
 * TypeScript sources through tsx, as `npm start` does (2026-11-29, short JSON runs on PostgreSQL back
 * to back: 106.6 runs/s built, 66.2 through tsx, whose module resolution runs on each of the lazy
 * requires kafkajs makes per request).
 */
export function benchEntry(defaultSource: 'built' | 'tsx'): { entry?: string; name: string } {
  const source = process.env.BENCH_SOURCE ?? defaultSource;
  if (source === 'tsx') return { name: 'TypeScript sources through tsx' };
  if (source !== 'built') throw new Error(`BENCH_SOURCE is built or tsx, not ${source}`);
  buildDist();
  return { entry: 'dist/all-in-one/main.js', name: 'built JavaScript' };
}

/** `npm run build` into dist/: the JavaScript a deployment runs. */
export function buildDist() {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
}
