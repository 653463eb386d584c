import { sql, type Kysely, type Migration } from '@hangar/storage';

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
};
