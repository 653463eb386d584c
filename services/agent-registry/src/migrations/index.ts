import { createOutboxTables, sql, type Kysely, type Migration } from '@hangar/storage';
import { AGENT_CHANGE_OUTBOX } from '../agent.repository.js';

/** The schema this service owns: `{Stores:Postgres:SchemaName}_registry`. */
export const REGISTRY_SCHEMA = 'registry';

export const registryMigrations: Record<string, Migration> = {
  '0001_agents': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('agents')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('current_version', 'integer', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('agents_pk', ['tenant_id', 'name'])
        .execute();
      await db.schema
        .createTable('agent_versions')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('version', 'integer', (column) => column.notNull())
        .addColumn('definition', 'jsonb', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('created_by', 'text', (column) => column.notNull())
        .addPrimaryKeyConstraint('agent_versions_pk', ['tenant_id', 'name', 'version'])
        .addForeignKeyConstraint('agent_versions_agent_fk', ['tenant_id', 'name'], 'agents', ['tenant_id', 'name'], (fk) =>
          fk.onDelete('cascade'),
        )
        .execute();
    },
  },
  '0002_agent_change_outbox': {
    async up(db: Kysely<any>) {
      // Agent changes on their way to the event log (webhooks): written with the change, deleted once shipped.
      await createOutboxTables(db, AGENT_CHANGE_OUTBOX);
    },
  },
  '0003_tool_servers': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tool_servers')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('url', 'text', (column) => column.notNull())
        .addColumn('transport', 'text', (column) => column.notNull())
        .addColumn('headers', 'jsonb', (column) => column.notNull())
        .addColumn('secret_key', 'text')
        .addColumn('enabled', 'boolean', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('tools', 'jsonb', (column) => column.notNull())
        .addColumn('error', 'text')
        .addColumn('refreshed_at', 'timestamptz')
        .addColumn('refresh_claimed_until', 'timestamptz')
        .addColumn('generation', 'text', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('tool_servers_pk', ['tenant_id', 'name'])
        .execute();
    },
  },
  '0004_tool_server_resources': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('tool_servers')
        .addColumn('resources', 'jsonb', (column) => column.notNull().defaultTo(sql`'[]'::jsonb`))
        .execute();
    },
  },
};
