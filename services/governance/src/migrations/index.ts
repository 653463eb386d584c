import { sql, type Kysely, type Migration } from '@hangar/storage';

export const governanceMigrations: Record<string, Migration> = {
  '0001_audit_entries': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('audit_entries')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('actor', 'text', (column) => column.notNull())
        .addColumn('user_id', 'text')
        .addColumn('action', 'text', (column) => column.notNull())
        .addColumn('resource_type', 'text', (column) => column.notNull())
        .addColumn('resource_id', 'text', (column) => column.notNull())
        .addColumn('details', 'jsonb', (column) => column.notNull().defaultTo(sql`'{}'::jsonb`))
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema.createIndex('audit_entries_tenant_created').on('audit_entries').columns(['tenant_id', 'created_at']).execute();
    },
  },
};
