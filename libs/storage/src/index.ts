export * from './provider.js';
export { PGliteDialect, PGliteLock } from './pglite-dialect.js';
export { sql, type Kysely, type Migration, type Insertable, type Selectable, type Generated } from 'kysely';
export { jsonb } from './jsonb.js';
