// First: client libraries are patched for spans as they load (see instrumentation.ts).
import '@hangar/platform/instrumentation';
import { ConfigError, createLogger, loadConfig, storageSettingsOf, type HangarConfig } from '@hangar/platform';
import { createStorageProvider } from '@hangar/storage';
import { migrateAll, prepareVectorTable, waitForMigrations } from './migrate.js';

/**
 * Applies every service's migrations and exits 0 (the Kubernetes migration Job), whatever
 * `AutoApplyMigrations` says. With `HANGAR_MIGRATE=wait` it applies nothing and exits 0 once the
 * database holds every migration of this build (the init container of each service's pod).
 */
const mode = process.env.HANGAR_MIGRATE ?? 'apply';
if (mode !== 'apply' && mode !== 'wait') {
  console.error(`HANGAR_MIGRATE must be apply or wait, not ${mode}`);
  process.exit(1);
}
let config: HangarConfig;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exit(1);
}
const logger = createLogger({ name: 'migrate', level: config.Logging.Level, format: config.Logging.Format });
const storage = await createStorageProvider(storageSettingsOf(config, (error) => logger.warn({ err: error.message }, 'engine trouble')));
try {
  if (mode === 'wait') await waitForMigrations(storage, logger);
  else {
    await migrateAll(storage, logger);
    await prepareVectorTable(storage, config, logger);
  }
  logger.info({ mode }, mode === 'wait' ? 'every migration is applied' : 'every schema is up to date');
} catch (error) {
  logger.error({ err: error }, 'migration failed');
  process.exitCode = 1;
} finally {
  await storage.close();
}
