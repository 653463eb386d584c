import { createLeaseTable, sql, type Kysely, type Migration } from '@hangar/storage';

/** The schema this service owns: `{Stores:Postgres:SchemaName}_runs`. */
export const RUN_SCHEMA = 'runs';

export const runMigrations: Record<string, Migration> = {
  '0001_runs': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('runs')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('agent_name', 'text', (column) => column.notNull())
        .addColumn('agent_version', 'integer')
        .addColumn('session_id', 'text')
        // RunStatus numeric values, never renumbered: Queued 0, Running 1, Completed 2, Failed 3, Canceled 4, AwaitingApproval 5.
        .addColumn('status', 'smallint', (column) => column.notNull())
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('is_streaming', 'boolean', (column) => column.notNull())
        .addColumn('started_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('completed_at', 'timestamptz')
        .addColumn('input_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('output_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('cached_input_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('reasoning_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('total_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('input_cost', 'numeric')
        .addColumn('output_cost', 'numeric')
        .addColumn('cached_input_cost', 'numeric')
        .addColumn('total_cost', 'numeric')
        .addColumn('cost_currency', 'text')
        .addColumn('input_price_per_mtok', 'numeric')
        .addColumn('output_price_per_mtok', 'numeric')
        .addColumn('cached_input_price_per_mtok', 'numeric')
        .addColumn('model_provider', 'text')
        .addColumn('model', 'text')
        .addColumn('error_type', 'text')
        .addColumn('error_message', 'text')
        .addColumn('parent_run_id', 'uuid')
        .addColumn('root_run_id', 'uuid', (column) => column.notNull())
        .addColumn('depth', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('user_id', 'text')
        .addColumn('labels', 'jsonb', (column) => column.notNull().defaultTo(sql`'{}'::jsonb`))
        .execute();
      await db.schema.createIndex('runs_tenant_started').on('runs').columns(['tenant_id', 'started_at']).execute();
      await db.schema.createIndex('runs_root').on('runs').columns(['root_run_id']).execute();
      await db.schema
        .createTable('run_events')
        .addColumn('run_id', 'uuid', (column) => column.notNull().references('runs.id').onDelete('cascade'))
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('type', 'text', (column) => column.notNull())
        .addColumn('at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('data', 'jsonb', (column) => column.notNull())
        .addPrimaryKeyConstraint('run_events_pk', ['run_id', 'seq'])
        .execute();
      await db.schema
        .createTable('run_inputs')
        .addColumn('run_id', 'uuid', (column) => column.primaryKey().references('runs.id').onDelete('cascade'))
        .addColumn('input', 'jsonb', (column) => column.notNull())
        .addColumn('recorded_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .execute();
    },
  },
  '0002_run_scores': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('run_scores')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('run_id', 'uuid', (column) => column.notNull().references('runs.id').onDelete('cascade'))
        // '' targets the whole run; the API shows it as messageId null.
        .addColumn('message_key', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('value', 'double precision')
        .addColumn('text_value', 'text')
        .addColumn('source', 'text', (column) => column.notNull())
        .addColumn('author', 'text', (column) => column.notNull())
        .addColumn('comment', 'text')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema
        .createIndex('run_scores_one_per_author_name_target')
        .on('run_scores')
        .columns(['run_id', 'message_key', 'name', 'author', 'source'])
        .unique()
        .execute();
    },
  },
  '0003_jobs': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('jobs')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('run_id', 'uuid', (column) => column.notNull().references('runs.id').onDelete('cascade'))
        .addColumn('lane', 'text', (column) => column.notNull().defaultTo('default'))
        .addColumn('payload', 'jsonb', (column) => column.notNull())
        // queued → leased → done | failed; an expired lease is taken over by another worker.
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'timestamptz')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema.createIndex('jobs_ready').on('jobs').columns(['status', 'created_at']).execute();
    },
  },
  '0004_run_heartbeats': {
    async up(db: Kysely<any>) {
      // Written while a run executes (RunReconciliation): a Running run without recent beats was orphaned.
      await db.schema.alterTable('runs').addColumn('heartbeat_at', 'timestamptz').execute();
    },
  },
  '0005_run_continuations': {
    async up(db: Kysely<any>) {
      // What restarting an interactive run needs (RunContinuation), kept while it executes.
      await db.schema
        .createTable('run_continuations')
        .addColumn('run_id', 'uuid', (column) => column.primaryKey().references('runs.id').onDelete('cascade'))
        .addColumn('payload', 'jsonb', (column) => column.notNull())
        .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .execute();
    },
  },
  '0006_run_event_outbox': {
    async up(db: Kysely<any>) {
      // Events on their way to the event log (Kafka): written with the event, deleted once shipped.
      await db.schema
        .createTable('run_event_outbox')
        .addColumn('id', 'bigserial', (column) => column.primaryKey())
        .addColumn('root_run_id', 'uuid', (column) => column.notNull())
        .addColumn('payload', 'jsonb', (column) => column.notNull())
        .execute();
    },
  },
  '0007_run_approvals': {
    async up(db: Kysely<any>) {
      // Tool calls waiting for a human decision: Pending → Approved | Denied | Expired.
      await db.schema
        .createTable('run_approvals')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('run_id', 'uuid', (column) => column.notNull().references('runs.id').onDelete('cascade'))
        .addColumn('tool_call_id', 'text', (column) => column.notNull())
        .addColumn('tool_name', 'text', (column) => column.notNull())
        .addColumn('args', 'jsonb')
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('decided_by', 'text')
        .addColumn('comment', 'text')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
        .addColumn('decided_at', 'timestamptz')
        .execute();
      await db.schema.createIndex('run_approvals_run').on('run_approvals').column('run_id').execute();
      await db.schema.createIndex('run_approvals_pending').on('run_approvals').columns(['status', 'expires_at']).execute();
    },
  },
  '0008_run_event_outbox_lease': {
    async up(db: Kysely<any>) {
      // Who ships the outbox right now: one relay at a time, and none holds a transaction open while it ships.
      await db.schema
        .createTable('run_event_outbox_lease')
        .addColumn('id', 'smallint', (column) => column.primaryKey().check(sql`id = 1`))
        .addColumn('owner', 'text')
        .addColumn('expires_at', 'timestamptz')
        .execute();
      await db.insertInto('run_event_outbox_lease').values({ id: 1, owner: null, expires_at: null }).execute();
    },
  },
  '0009_jobs_by_tenant': {
    async up(db: Kysely<any>) {
      // Fair leasing counts each tenant's leased jobs.
      await db.schema.createIndex('jobs_tenant_status').on('jobs').columns(['tenant_id', 'status']).execute();
    },
  },
  '0010_retention_indexes': {
    async up(db: Kysely<any>) {
      // Retention finds old rows by these times, a batch at a time.
      await db.schema.createIndex('run_events_at').on('run_events').column('at').execute();
      await db.schema.createIndex('run_inputs_recorded_at').on('run_inputs').column('recorded_at').execute();
      await db.schema.createIndex('run_scores_created_at').on('run_scores').column('created_at').execute();
    },
  },
  '0011_run_spans': {
    async up(db: Kysely<any>) {
      // A run's kept spans (Observability:PersistSpans), read as its trace.
      await db.schema
        .createTable('run_spans')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('run_id', 'uuid', (column) => column.notNull())
        .addColumn('span_id', 'text', (column) => column.notNull())
        .addColumn('trace_id', 'text', (column) => column.notNull())
        .addColumn('parent_span_id', 'text')
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('start_time', 'timestamptz', (column) => column.notNull())
        .addColumn('end_time', 'timestamptz', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('attributes', 'jsonb', (column) => column.notNull())
        .addPrimaryKeyConstraint('run_spans_pk', ['run_id', 'span_id'])
        .execute();
      await db.schema.createIndex('run_spans_start_time').on('run_spans').column('start_time').execute();
    },
  },
  '0011_schedules': {
    async up(db: Kysely<any>) {
      // Each job carries its own limit: queued runs take AsyncRun:MaxAttempts, scheduled ones Scheduling:MaxAttempts
      // (null on jobs queued before: the worker's AsyncRun:MaxAttempts).
      await db.schema.alterTable('jobs').addColumn('max_attempts', 'integer').execute();
      await db.schema
        .createTable('schedules')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('handler_key', 'text', (column) => column.notNull())
        .addColumn('cron', 'text', (column) => column.notNull())
        .addColumn('time_zone', 'text', (column) => column.notNull())
        .addColumn('payload', 'jsonb', (column) => column.notNull())
        .addColumn('enabled', 'boolean', (column) => column.notNull())
        // Whom its runs act for: the caller who saved it last.
        .addColumn('saved_by', 'jsonb', (column) => column.notNull())
        // Null while disabled.
        .addColumn('next_fire_at', 'timestamptz')
        .addColumn('last_fire_at', 'timestamptz')
        .addColumn('last_run_id', 'uuid')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addUniqueConstraint('schedules_tenant_name', ['tenant_id', 'name'])
        .execute();
      await db.schema.createIndex('schedules_due').on('schedules').columns(['enabled', 'next_fire_at']).execute();
      // One row per firing: the key that keeps a fire time from being fired twice by two instances.
      await db.schema
        .createTable('schedule_firings')
        .addColumn('schedule_id', 'uuid', (column) => column.notNull().references('schedules.id').onDelete('cascade'))
        .addColumn('fire_at', 'timestamptz', (column) => column.notNull())
        .addColumn('run_id', 'uuid', (column) => column.notNull().references('runs.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('schedule_firings_pk', ['schedule_id', 'fire_at'])
        .execute();
      // SingletonExecution: the one scheduler of a fleet that fires.
      await createLeaseTable(db, 'scheduler_lease');
    },
  },
  '0012_workflows': {
    async up(db: Kysely<any>) {
      // Every version of a workflow's graph; deleting a workflow deletes them all.
      await db.schema
        .createTable('workflows')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('version', 'integer', (column) => column.notNull())
        .addColumn('definition', 'jsonb', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('workflows_pk', ['tenant_id', 'name', 'version'])
        .execute();
      // A workflow run beside its runs row (kind Workflow: status, times, errors there): the graph it
      // took, where it stands, and who executes it now.
      await db.schema
        .createTable('workflow_runs')
        .addColumn('run_id', 'uuid', (column) => column.primaryKey().references('runs.id').onDelete('cascade'))
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('workflow_name', 'text', (column) => column.notNull())
        .addColumn('workflow_version', 'integer', (column) => column.notNull())
        .addColumn('definition', 'jsonb', (column) => column.notNull())
        .addColumn('input', 'jsonb', (column) => column.notNull())
        .addColumn('parameters', 'jsonb', (column) => column.notNull())
        .addColumn('caller', 'jsonb', (column) => column.notNull())
        .addColumn('state', 'jsonb', (column) => column.notNull())
        .addColumn('phase', 'text', (column) => column.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'timestamptz')
        .addColumn('active_ms', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('output', 'jsonb')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .execute();
      await db.schema.createIndex('workflow_runs_ready').on('workflow_runs').columns(['phase', 'lease_expires_at']).execute();
      await db.schema.createIndex('workflow_runs_tenant').on('workflow_runs').columns(['tenant_id', 'workflow_name']).execute();
      await db.schema
        .createTable('workflow_checkpoints')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('run_id', 'uuid', (column) => column.notNull().references('runs.id').onDelete('cascade'))
        .addColumn('super_step', 'integer', (column) => column.notNull())
        .addColumn('state', 'jsonb', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        // When its run ended: retention (WorkflowCheckpoints) counts from there, never while the run goes on.
        .addColumn('run_ended_at', 'timestamptz')
        .addUniqueConstraint('workflow_checkpoints_step', ['run_id', 'super_step'])
        .execute();
      await db.schema.createIndex('workflow_checkpoints_run_ended_at').on('workflow_checkpoints').column('run_ended_at').execute();
      // Human-input requests: one per input step and super step, Pending → Answered.
      await db.schema
        .createTable('workflow_requests')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('run_id', 'uuid', (column) => column.notNull().references('runs.id').onDelete('cascade'))
        .addColumn('super_step', 'integer', (column) => column.notNull())
        .addColumn('step_id', 'text', (column) => column.notNull())
        .addColumn('prompt', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('answer', 'jsonb')
        .addColumn('answered_by', 'text')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('answered_at', 'timestamptz')
        .addUniqueConstraint('workflow_requests_step', ['run_id', 'super_step', 'step_id'])
        .execute();
    },
  },
  '0013_voice_conversations': {
    async up(db: Kysely<any>) {
      // One row per voice conversation (its turns are runs of kind Voice in its session). Open rows
      // whose instance still beats count against Voice:Conversation:MaxConcurrentConnectionsPerTenant.
      await db.schema
        .createTable('voice_conversations')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('agent_name', 'text', (column) => column.notNull())
        .addColumn('session_id', 'text', (column) => column.notNull())
        .addColumn('turns', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('started_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('last_seen_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('ended_at', 'timestamptz')
        .addColumn('close_code', 'integer')
        .execute();
      await db.schema.createIndex('voice_conversations_open').on('voice_conversations').columns(['tenant_id', 'ended_at']).execute();
    },
  },
};
