import { sql, type Kysely, type Migration } from '@hangar/storage';

/** The schema this service owns: `{Stores:Postgres:SchemaName}_sessions`. */
export const SESSION_SCHEMA = 'sessions';

export const sessionMigrations: Record<string, Migration> = {
  '0001_sessions': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('sessions')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('id', 'text', (column) => column.notNull())
        .addColumn('agent_name', 'text')
        .addColumn('owner_id', 'text')
        .addColumn('parent_session_id', 'text')
        .addColumn('version', 'integer', (column) => column.notNull().defaultTo(1))
        .addColumn('state_schema_version', 'integer', (column) => column.notNull().defaultTo(1))
        .addColumn('state_maf_version', 'text', (column) => column.notNull())
        .addColumn('state', 'jsonb', (column) => column.notNull().defaultTo(sql`'{}'::jsonb`))
        .addColumn('message_count', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('sessions_pk', ['tenant_id', 'id'])
        .execute();
      await db.schema.createIndex('sessions_tenant_updated').on('sessions').columns(['tenant_id', 'updated_at']).execute();
      await db.schema
        .createTable('session_messages')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('session_id', 'text', (column) => column.notNull())
        .addColumn('sequence', 'integer', (column) => column.notNull())
        .addColumn('id', 'uuid', (column) => column.notNull())
        .addColumn('role', 'text', (column) => column.notNull())
        .addColumn('content', 'jsonb', (column) => column.notNull())
        .addColumn('run_id', 'text')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('session_messages_pk', ['tenant_id', 'session_id', 'sequence'])
        .addForeignKeyConstraint('session_messages_session_fk', ['tenant_id', 'session_id'], 'sessions', ['tenant_id', 'id'], (fk) =>
          fk.onDelete('cascade'),
        )
        .execute();
    },
  },
  '0002_session_metadata': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('sessions')
        .addColumn('metadata', 'jsonb', (column) => column.notNull().defaultTo(sql`'{}'::jsonb`))
        .execute();
    },
  },
};
