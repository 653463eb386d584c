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
