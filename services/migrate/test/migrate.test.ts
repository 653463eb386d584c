import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { migrateAll, missingMigrations, SERVICE_SCHEMAS, waitForMigrations } from '@hangar/migrate';
import { createLogger, SERVICE_NAMES } from '@hangar/platform';
import { createStorageProvider } from '@hangar/storage';
import { dropSchemas, TEST_POSTGRES_URL, uniqueSchemaPrefix } from '@hangar/testing';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const logger = createLogger({ name: 'migrate-test', level: 'silent' });
const prefixes: string[] = [];
afterAll(() => Promise.all(prefixes.map(dropSchemas)));

const freshPrefix = () => {
  const prefix = uniqueSchemaPrefix();
  prefixes.push(prefix);
  return prefix;
};

/** Services as Kubernetes runs them: they open their schemas and leave migrations to the Job. */
const storageOn = (schemaPrefix: string) =>
  createStorageProvider({
    postgresConnectionString: TEST_POSTGRES_URL,
    schemaPrefix,
    embeddedDataDir: 'memory://',
    autoApplyMigrations: false,
    commandTimeoutSeconds: 30,
  });

/** `services/migrate/src/main.ts` as the image runs it (HANGAR_SERVICE=migrate); resolves with its exit code. */
function runMigrate(env: Record<string, string>): Promise<number | null> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/migrate/src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HANGAR__Logging__Level: 'warn', ...env },
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.once('exit', resolve));
}

describe('the migration entry', () => {
  it('knows a schema for every service', () => {
    expect(Object.keys(SERVICE_SCHEMAS).sort()).toEqual([...SERVICE_NAMES].sort());
    expect(new Set(Object.values(SERVICE_SCHEMAS).map((entry) => entry.schema)).size).toBe(SERVICE_NAMES.length);
  });

  it('applies every service migration, and a waiting init container goes on only then', async () => {
    const storage = await storageOn(freshPrefix());
    try {
      expect(Object.keys(await missingMigrations(storage)).sort()).toEqual([...SERVICE_NAMES].sort());
      let waited = false;
      const waiting = waitForMigrations(storage, logger, 50).then(() => (waited = true));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(waited).toBe(false);
      await migrateAll(storage, logger);
      await waiting;
      expect(await missingMigrations(storage)).toEqual({});
      // Applied again (the Job of the next rollout) it finds nothing to do.
      await migrateAll(storage, logger);
    } finally {
      await storage.close();
    }
  });

  it('exits 0 once the schemas are up to date, and its wait mode exits 0 on them', async () => {
    const env = {
      HANGAR__Stores__Postgres__ConnectionString: TEST_POSTGRES_URL,
      HANGAR__Stores__Postgres__SchemaName: freshPrefix(),
      // What the Kubernetes ConfigMap says: the services do not migrate; the Job does all the same.
      HANGAR__Stores__Postgres__AutoApplyMigrations: 'false',
    };
    expect(await runMigrate(env)).toBe(0);
    expect(await runMigrate({ ...env, HANGAR_MIGRATE: 'wait' })).toBe(0);
    expect(await runMigrate({ ...env, HANGAR_MIGRATE: 'later' })).toBe(1);
  }, 60_000);
});
