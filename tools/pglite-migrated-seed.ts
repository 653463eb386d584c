import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { SERVICE_SCHEMAS } from '@hangar/migrate';
import { createStorageProvider } from '@hangar/storage';
import { PGLITE_MIGRATED_DIR, PGLITE_MIGRATED_SEED, writeImageOf } from '../libs/testing/src/pglite-seed.js';

/** Where the run's image is kept: the global setup runs once per project, in one process. */
const MADE = Symbol.for('hangar.pgliteMigratedSeed');

/**
 * Makes {@link PGLITE_MIGRATED_SEED} and {@link PGLITE_MIGRATED_DIR} once per test run: every
 * service's migrations applied to a cluster in a directory of its own (the storage provider as the
 * all-in-one opens it, prefix `hangar`), the directory dumped as an image, and kept.
 */
export function writeMigratedPgliteSeed(): Promise<void> {
  const holder = globalThis as { [MADE]?: Promise<void> };
  return (holder[MADE] ??= migrateAndDump());
}

async function migrateAndDump() {
  // Beside where it is kept (one file system, for the rename).
  const dataDir = mkdtempSync(`${PGLITE_MIGRATED_DIR}-`);
  try {
    const storage = await createStorageProvider({
      postgresConnectionString: null,
      schemaPrefix: 'hangar',
      embeddedDataDir: dataDir,
      autoApplyMigrations: true,
      commandTimeoutSeconds: 60,
    });
    try {
      for (const { schema, migrations } of Object.values(SERVICE_SCHEMAS)) await storage.migrate(schema, migrations);
    } finally {
      await storage.close();
    }
    await writeImageOf(dataDir, PGLITE_MIGRATED_SEED);
    rmSync(PGLITE_MIGRATED_DIR, { recursive: true, force: true });
    renameSync(dataDir, PGLITE_MIGRATED_DIR);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
