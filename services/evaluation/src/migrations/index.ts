import { sql, type Kysely, type Migration } from '@hangar/storage';

/** The schema this service owns: `{Stores:Postgres:SchemaName}_evaluation`. */
export const EVALUATION_SCHEMA = 'evaluation';

/** Eval suites, their runs (each a lease for the instance executing it) and a result per case. */
export const evaluationMigrations: Record<string, Migration> = {
  '0001_eval_suites': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('suites')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('version', 'integer', (column) => column.notNull())
        .addColumn('cases', 'jsonb', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('suites_pk', ['tenant_id', 'name'])
        .execute();
      await db.schema
        .createTable('suite_runs')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('suite', 'text', (column) => column.notNull())
        .addColumn('suite_version', 'integer', (column) => column.notNull())
        // The cases as they were when the run was asked for: a later version of the suite does not change it.
        .addColumn('cases', 'jsonb', (column) => column.notNull())
        .addColumn('agent_name', 'text', (column) => column.notNull())
        .addColumn('agent_version', 'integer')
        // Who asked: the case runs act for them.
        .addColumn('caller', 'jsonb', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('aggregate', 'jsonb')
        .addColumn('error', 'text')
        // Times an executing instance gave the run back after an error (the run executor away): at a limit, the run fails.
        .addColumn('failures', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'timestamptz')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('started_at', 'timestamptz')
        .addColumn('completed_at', 'timestamptz')
        .addForeignKeyConstraint('suite_runs_suite_fk', ['tenant_id', 'suite'], 'suites', ['tenant_id', 'name'], (constraint) =>
          constraint.onDelete('cascade'),
        )
        .execute();
      await db.schema.createIndex('suite_runs_suite_created').on('suite_runs').columns(['tenant_id', 'suite', 'created_at']).execute();
      await db.schema
        .createIndex('suite_runs_unfinished')
        .on('suite_runs')
        .column('created_at')
        .where(sql.ref('completed_at'), 'is', null)
        .execute();
      await db.schema
        .createTable('case_results')
        .addColumn('suite_run_id', 'text', (column) => column.notNull().references('suite_runs.id').onDelete('cascade'))
        .addColumn('position', 'integer', (column) => column.notNull())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('case_id', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('score', 'double precision', (column) => column.notNull())
        .addColumn('result', 'jsonb', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('case_results_pk', ['suite_run_id', 'position'])
        .execute();
      await db.schema.createIndex('case_results_created').on('case_results').column('created_at').execute();
    },
  },
  '0002_online_evaluation': {
    async up(db: Kysely<any>) {
      // One row per sampled run: claimed before its judge is asked (so a redelivered event is not judged twice), scored after.
      await db.schema
        .createTable('online_scores')
        .addColumn('run_id', 'text', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('agent_name', 'text', (column) => column.notNull())
        .addColumn('agent_version', 'integer')
        .addColumn('score', 'double precision')
        .addColumn('reason', 'text')
        .addColumn('judge_run_id', 'text')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('scored_at', 'timestamptz')
        .execute();
      await db.schema
        .createIndex('online_scores_agent_scored')
        .on('online_scores')
        .columns(['tenant_id', 'agent_name', 'scored_at'])
        .execute();
      // OnlineEvaluation:MaxScoresPerHour, per tenant and clock hour: reserved atomically across instances.
      await db.schema
        .createTable('online_budget')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('hour', 'timestamptz', (column) => column.notNull())
        .addColumn('used', 'integer', (column) => column.notNull())
        .addPrimaryKeyConstraint('online_budget_pk', ['tenant_id', 'hour'])
        .execute();
    },
  },
  '0003_experiments': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('experiments')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('agent_name', 'text', (column) => column.notNull())
        .addColumn('variants', 'jsonb', (column) => column.notNull())
        .addColumn('canary', 'jsonb')
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('reason', 'text')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('started_at', 'timestamptz')
        .addColumn('stopped_at', 'timestamptz')
        // When a canary scan last looked at it: one instance per Canary:ScanInterval takes it.
        .addColumn('scanned_at', 'timestamptz')
        .addPrimaryKeyConstraint('experiments_pk', ['tenant_id', 'name'])
        .execute();
      // One running experiment per agent: a run must know which variant it is.
      await db.schema
        .createIndex('experiments_one_running_per_agent')
        .on('experiments')
        .columns(['tenant_id', 'agent_name'])
        .unique()
        .where(sql.ref('status'), '=', 'Running')
        .execute();
    },
  },
};
