import { sql, type Kysely, type Migration } from '@hangar/storage';

/** The schema this service owns: `{Stores:Postgres:SchemaName}_skills`. */
export const SKILL_SCHEMA = 'skills';

export const skillMigrations: Record<string, Migration> = {
  '0001_skills': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('skills')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('compatibility', 'text')
        .addColumn('instructions', 'text', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('skills_pk', ['tenant_id', 'name'])
        .execute();
    },
  },
  '0002_skill_files_and_grants': {
    async up(db: Kysely<any>) {
      for (const table of ['skill_resources', 'skill_scripts']) {
        await db.schema
          .createTable(table)
          .addColumn('tenant_id', 'text', (column) => column.notNull())
          .addColumn('skill_name', 'text', (column) => column.notNull())
          .addColumn('position', 'integer', (column) => column.notNull())
          .addColumn('name', 'text', (column) => column.notNull())
          .$call((builder) => (table === 'skill_scripts' ? builder.addColumn('extension', 'text', (column) => column.notNull()) : builder))
          .addColumn('content', 'text', (column) => column.notNull())
          .addPrimaryKeyConstraint(`${table}_pk`, ['tenant_id', 'skill_name', 'name'])
          .addForeignKeyConstraint(`${table}_skill_fk`, ['tenant_id', 'skill_name'], 'skills', ['tenant_id', 'name'], (fk) =>
            fk.onDelete('cascade'),
          )
          .execute();
      }
      // Grants outlive the skill they name (a skill may be deleted and saved again); retention removes old ones.
      await db.schema
        .createTable('skill_script_grants')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('skill_name', 'text', (column) => column.notNull())
        .addColumn('script_name', 'text')
        .addColumn('expires_at', 'timestamptz')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('created_by', 'text', (column) => column.notNull())
        .addColumn('revoked_at', 'timestamptz')
        .addColumn('revoked_by', 'text')
        .execute();
      await db.schema.createIndex('skill_script_grants_skill').on('skill_script_grants').columns(['tenant_id', 'skill_name']).execute();
    },
  },
};
