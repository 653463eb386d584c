import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_SCHEMAS } from '@hangar/migrate';
import { createStorageProvider } from '@hangar/storage';
import { PGLITE_MIGRATED_SEED, writeImage } from '../libs/testing/src/pglite-seed.js';

/** Where the run's image is kept: the global setup runs once per project, in one process. */
const MADE = Symbol.for('hangar.pgliteMigratedSeed');

/**
 * Makes {@link PGLITE_MIGRATED_SEED} once per test run: every service's migrations applied to a
 * cluster in a directory of its own (the storage provider as the all-in-one opens it, prefix
 * `hangar`), then the directory dumped as an image.
 */
export function writeMigratedPgliteSeed(): Promise<void> {
  const holder = globalThis as { [MADE]?: Promise<void> };
  return (holder[MADE] ??= migrateAndDump());
}

async function migrateAndDump() {
  const dataDir = mkdtempSync(join(tmpdir(), 'hangar-migrated-seed-'));
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
    const { PGlite } = await import('@electric-sql/pglite');
    const { vector } = await import('@electric-sql/pglite-pgvector');
    const pglite = await PGlite.create(dataDir, { extensions: { vector } });
    try {
      const image = await pglite.dumpDataDir('none');
      writeImage(PGLITE_MIGRATED_SEED, new Uint8Array(await image.arrayBuffer()));
    } finally {
      await pglite.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
