import { createLeaseTable, sql, type Kysely, type Migration } from '@hangar/storage';

/** The schema this service owns: `{Stores:Postgres:SchemaName}_governance`. */
export const GOVERNANCE_SCHEMA = 'governance';

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
  '0002_idempotency_keys': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('scope', 'text', (column) => column.notNull())
        .addColumn('key', 'text', (column) => column.notNull())
        .addColumn('fingerprint', 'text', (column) => column.notNull())
        // in_progress (held until locked_until) → completed (response stored until expires_at)
        .addColumn('state', 'text', (column) => column.notNull())
        .addColumn('locked_until', 'timestamptz', (column) => column.notNull())
        .addColumn('response', 'jsonb')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('expires_at', 'timestamptz', (column) => column.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['tenant_id', 'scope', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expires').on('idempotency_keys').column('expires_at').execute();
    },
  },
  '0003_quotas': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('quota_rules')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('metric', 'text', (column) => column.notNull())
        .addColumn('period', 'text', (column) => column.notNull())
        .addColumn('limit', 'double precision', (column) => column.notNull())
        .addColumn('agent_name', 'text')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('quota_rules_pk', ['tenant_id', 'name'])
        .execute();
      // What each metric used per tenant, agent and window start (rules read the windows they cover).
      await db.schema
        .createTable('quota_usage')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('agent_name', 'text', (column) => column.notNull())
        .addColumn('metric', 'text', (column) => column.notNull())
        .addColumn('hour_start', 'timestamptz', (column) => column.notNull())
        .addColumn('used', 'double precision', (column) => column.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('quota_usage_pk', ['tenant_id', 'agent_name', 'metric', 'hour_start'])
        .execute();
      // Run events already counted (the event log delivers at least once).
      await db.schema
        .createTable('quota_counted_events')
        .addColumn('run_id', 'uuid', (column) => column.notNull())
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('counted_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('quota_counted_events_pk', ['run_id', 'seq'])
        .execute();
    },
  },
  '0004_api_keys': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'uuid', (column) => column.primaryKey())
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('role', 'text', (column) => column.notNull())
        // Null: every scope of the role.
        .addColumn('scopes', 'jsonb')
        .addColumn('prefix', 'text', (column) => column.notNull())
        .addColumn('key_hash', 'text', (column) => column.notNull().unique())
        .addColumn('user_id', 'text')
        .addColumn('labels', 'jsonb', (column) => column.notNull())
        .addColumn('expires_at', 'timestamptz')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('created_by', 'text', (column) => column.notNull())
        .addColumn('last_used_at', 'timestamptz')
        .addColumn('revoked_at', 'timestamptz')
        .execute();
      await db.schema.createIndex('api_keys_tenant').on('api_keys').columns(['tenant_id', 'created_at']).execute();
    },
  },
  '0005_tenants': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tenants')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('display_name', 'text', (column) => column.notNull())
        .addColumn('enabled', 'boolean', (column) => column.notNull())
        .addColumn('providers', 'jsonb', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .execute();
    },
  },
  '0006_webhooks': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('webhook_subscriptions')
        .addColumn('id', 'uuid', (column) => column.primaryKey().defaultTo(sql`gen_random_uuid()`))
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('url', 'text', (column) => column.notNull())
        .addColumn('events', 'jsonb', (column) => column.notNull())
        // The NAME of the configuration key holding the signing secret.
        .addColumn('secret_key', 'text', (column) => column.notNull())
        .addColumn('headers', 'jsonb', (column) => column.notNull())
        .addColumn('enabled', 'boolean', (column) => column.notNull())
        .addColumn('description', 'text')
        .addColumn('consecutive_failures', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('disabled_at', 'timestamptz')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addUniqueConstraint('webhook_subscriptions_name', ['tenant_id', 'name'])
        .execute();
      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'uuid', (column) => column.primaryKey().defaultTo(sql`gen_random_uuid()`))
        .addColumn('subscription_id', 'uuid', (column) => column.notNull().references('webhook_subscriptions.id').onDelete('cascade'))
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('event_id', 'text', (column) => column.notNull())
        .addColumn('event_type', 'text', (column) => column.notNull())
        .addColumn('body', 'text', (column) => column.notNull())
        .addColumn('attempt', 'integer', (column) => column.notNull().defaultTo(0))
        // Pending → Delivered | Failed (retry planned) → … → Delivered | Abandoned
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('error', 'text')
        .addColumn('next_attempt_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'timestamptz')
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('delivered_at', 'timestamptz')
        // At-least-once intake offers an event again; it is queued once per subscription.
        .addUniqueConstraint('webhook_deliveries_event', ['subscription_id', 'event_id'])
        .execute();
      await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
      await db.schema
        .createIndex('webhook_deliveries_by_subscription')
        .on('webhook_deliveries')
        .columns(['subscription_id', 'created_at'])
        .execute();
      await db.schema
        .createTable('webhook_delivery_attempts')
        .addColumn('delivery_id', 'uuid', (column) => column.notNull().references('webhook_deliveries.id').onDelete('cascade'))
        .addColumn('attempt', 'integer', (column) => column.notNull())
        .addColumn('started_at', 'timestamptz', (column) => column.notNull())
        .addColumn('duration_ms', 'integer', (column) => column.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('error', 'text')
        .addPrimaryKeyConstraint('webhook_delivery_attempts_pk', ['delivery_id', 'attempt'])
        .execute();
    },
  },
  '0007_quota_threshold_notices': {
    async up(db: Kysely<any>) {
      // Each threshold of a rule is announced once per window.
      await db.schema
        .createTable('quota_threshold_notices')
        .addColumn('tenant_id', 'text', (column) => column.notNull())
        .addColumn('rule_name', 'text', (column) => column.notNull())
        .addColumn('window_start', 'timestamptz', (column) => column.notNull())
        .addColumn('percent', 'double precision', (column) => column.notNull())
        .addColumn('noticed_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addPrimaryKeyConstraint('quota_threshold_notices_pk', ['tenant_id', 'rule_name', 'window_start', 'percent'])
        .execute();
    },
  },
  '0008_retention': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('retention_policies')
        .addColumn('target', 'text', (column) => column.primaryKey())
        .addColumn('max_age_ms', 'bigint')
        .addColumn('archive', 'boolean', (column) => column.notNull())
        .addColumn('created_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
        .execute();
      // Which instance sweeps now: one at a time, the others skip their turn.
      await createLeaseTable(db, 'retention_lease');
    },
  },
  '0009_delivered_webhooks_index': {
    async up(db: Kysely<any>) {
      // Retention deletes delivered rows by their delivery time.
      await db.schema.createIndex('webhook_deliveries_delivered_at').on('webhook_deliveries').column('delivered_at').execute();
    },
  },
};
