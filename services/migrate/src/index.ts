export { migrateAll, missingMigrations, SERVICE_SCHEMAS, waitForMigrations } from './migrate.js';
