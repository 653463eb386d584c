export * from './provider.js';
export { PGliteDialect } from './pglite-dialect.js';
export { PGliteWorker } from './pglite-worker-client.js';
export {
  sql,
  type Kysely,
  type QueryCreator,
  type Migration,
  type Insertable,
  type Selectable,
  type Generated,
  type Transaction,
  type ExpressionBuilder,
  type RawBuilder,
} from 'kysely';
export { jsonb } from './jsonb.js';
export * from './outbox.js';
export * from './purge.js';
export * from './lease.js';
