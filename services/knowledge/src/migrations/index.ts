import { sql, type Kysely, type Migration } from '@hangar/storage';

/** The schema this service owns: `{Stores:Postgres:SchemaName}_knowledge`. */
export const KNOWLEDGE_SCHEMA = 'knowledge';

/**
 * Collections and documents. The chunks with their embeddings live in a table whose column type
 * holds Knowledge:Dimensions and that needs the vector extension: vector-table.ts makes it at start.
 */
export const knowledgeMigrations: Record<string, Migration> = {
  '0001_knowledge': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('collections')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('embedding_provider', 'text', (column) => column.notNull())
        .addColumn('embedding_model', 'text', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('collections_pk', ['tenant_id', 'name'])
        .execute();
      await db.schema
        .createTable('documents')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('id', 'text', (column) => column.notNull())
        .addColumn('collection', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('media_type', 'text', (column) => column.notNull())
        .addColumn('characters', 'integer', (column) => column.notNull())
        .addColumn('chunk_count', 'integer', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('documents_pk', ['tenant_id', 'id'])
        .addForeignKeyConstraint(
          'documents_collection_fk',
          ['tenant_id', 'collection'],
          'collections',
          ['tenant_id', 'name'],
          (constraint) => constraint.onDelete('cascade'),
        )
        .execute();
      await db.schema
        .createIndex('documents_collection_created')
        .on('documents')
        .columns(['tenant_id', 'collection', 'created_at'])
        .execute();
      await db.schema.createIndex('documents_created').on('documents').column('created_at').execute();
    },
  },
};
