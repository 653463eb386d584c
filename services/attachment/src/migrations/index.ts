import { sql, type Kysely, type Migration } from '@hangar/storage';

/** The schema this service owns: `{Stores:Postgres:SchemaName}_attachments`. */
export const ATTACHMENT_SCHEMA = 'attachments';

export const attachmentMigrations: Record<string, Migration> = {
  '0001_attachments': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('attachments')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('file_name', 'text', (column) => column.notNull())
        .addColumn('media_type', 'text', (column) => column.notNull())
        .addColumn('size', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('sha256', 'text', (column) => column.notNull().defaultTo(''))
        .addColumn('session_id', 'text')
        // `uploading` rows are invisible; a failed upload deletes its row, a crashed one is swept at start.
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema.createIndex('attachments_tenant_created').on('attachments').columns(['tenant_id', 'created_at']).execute();
      await db.schema.createIndex('attachments_tenant_session').on('attachments').columns(['tenant_id', 'session_id']).execute();
      await db.schema
        .createTable('attachment_chunks')
        .addColumn('attachment_id', 'uuid', (column) => column.notNull().references('attachments.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('data', 'bytea', (column) => column.notNull())
        .addPrimaryKeyConstraint('attachment_chunks_pk', ['attachment_id', 'seq'])
        .execute();
    },
  },
};
