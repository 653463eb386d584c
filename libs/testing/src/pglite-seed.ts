import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A package's version, from the workspace's node_modules (these packages export no package.json). */
const versionOf = (pkg: string) =>
  (JSON.parse(readFileSync(new URL(`../../../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The image of a fresh PGlite cluster that the tests' throw-away embedded stores start from
 * (StorageSettings.embeddedSeed): PGlite runs initdb for every `memory://` store, 3–5 s of a
 * CI core, where loading this image takes about 1 s. Named after the PGlite and pgvector versions
 * it was made with, so an upgrade makes a new one.
 */
export const PGLITE_SEED = fileURLToPath(
  new URL(
    `../../../.hangar/test-pglite-seed-${versionOf('@electric-sql/pglite')}-${versionOf('@electric-sql/pglite-pgvector')}.tar`,
    import.meta.url,
  ),
);

/** The seed when the test run's global setup made it (tools/test-engines.ts); without it, stores run initdb. */
export const pgliteSeed = (): string | undefined => (existsSync(PGLITE_SEED) ? PGLITE_SEED : undefined);

/**
 * The image of a cluster that also holds every service's schema, migrated to this checkout's
 * migrations under the default prefix (`hangar_*`): made anew by every test run's global setup
 * (tools/pglite-migrated-seed.ts), since migrations change with the code. A Hangar the tests start in
 * their own process begins from it and finds nothing to migrate (about 2 s of CPU a start spared).
 */
export const PGLITE_MIGRATED_SEED = fileURLToPath(new URL('../../../.hangar/test-pglite-migrated.tar', import.meta.url));

/**
 * The same migrated cluster as a data directory, which an all-in-one process a test spawns on a data
 * directory of its own starts from, copied (about 0.4 s), where it ran initdb and every migration.
 */
export const PGLITE_MIGRATED_DIR = fileURLToPath(new URL('../../../.hangar/test-pglite-migrated', import.meta.url));

/** The migrated image when this run's global setup made it. */
export const pgliteMigratedSeed = (): string | undefined => (existsSync(PGLITE_MIGRATED_SEED) ? PGLITE_MIGRATED_SEED : undefined);

/**
 * Opens the cluster at `dataDir` (`memory://`: a fresh one, by initdb) with the extensions the store
 * loads, and writes its image to `path`, aside first and then renamed, so a reader never sees half of one.
 */
export async function writeImageOf(dataDir: string, path: string): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { vector } = await import('@electric-sql/pglite-pgvector');
  const pglite = await PGlite.create(dataDir, { extensions: { vector } });
  try {
    const image = await pglite.dumpDataDir('none');
    mkdirSync(dirname(path), { recursive: true });
    const partial = `${path}.${process.pid}`;
    writeFileSync(partial, new Uint8Array(await image.arrayBuffer()));
    renameSync(partial, path);
  } finally {
    await pglite.close();
  }
}

/** Makes {@link PGLITE_SEED} unless it exists: a fresh cluster with the extensions the store loads, dumped. */
export async function writePgliteSeed(): Promise<void> {
  if (!existsSync(PGLITE_SEED)) await writeImageOf('memory://', PGLITE_SEED);
}
