import { sql, type Generated, type Kysely } from '@hangar/storage';
import type { GovernanceDatabase } from './governance.database.js';

export const QUOTA_METRICS = ['Runs', 'Tokens', 'Cost'] as const;
export type QuotaMetric = (typeof QUOTA_METRICS)[number];
export const QUOTA_PERIODS = ['Hour', 'Day', 'Month'] as const;
export type QuotaPeriod = (typeof QUOTA_PERIODS)[number];

export interface QuotaDatabase {
  quota_rules: {
    tenant_id: string;
    name: string;
    metric: QuotaMetric;
    period: QuotaPeriod;
    limit: number;
    agent_name: string | null;
    created_at: Date;
    updated_at: Date;
  };
  quota_usage: { tenant_id: string; agent_name: string; metric: QuotaMetric; hour_start: Date; used: number };
  quota_counted_events: { run_id: string; seq: number; counted_at: Date };
  quota_threshold_notices: { tenant_id: string; rule_name: string; window_start: Date; percent: number; noticed_at: Generated<Date> };
}

export interface QuotaRuleRow {
  name: string;
  metric: QuotaMetric;
  period: QuotaPeriod;
  limit: number;
  agentName: string | null;
}

const toRule = (row: QuotaDatabase['quota_rules']): QuotaRuleRow => ({
  name: row.name,
  metric: row.metric,
  period: row.period,
  limit: Number(row.limit),
  agentName: row.agent_name,
});

/** Quota rules, and usage kept per tenant, agent, metric and UTC hour (a rule sums the hours of its window). */
export function createQuotaRepository(db: Kysely<GovernanceDatabase>) {
  return {
    /** Creates or replaces a rule; `created` tells which. */
    async putRule(tenantId: string, rule: QuotaRuleRow): Promise<{ rule: QuotaRuleRow; created: boolean }> {
      return db.transaction().execute(async (trx) => {
        const existing = await trx
          .selectFrom('quota_rules')
          .select('name')
          .where('tenant_id', '=', tenantId)
          .where('name', '=', rule.name)
          .forUpdate()
          .executeTakeFirst();
        const values = { metric: rule.metric, period: rule.period, limit: rule.limit, agent_name: rule.agentName };
        const row = existing
          ? await trx
              .updateTable('quota_rules')
              .set({ ...values, updated_at: sql`now()` })
              .where('tenant_id', '=', tenantId)
              .where('name', '=', rule.name)
              .returningAll()
              .executeTakeFirstOrThrow()
          : await trx
              .insertInto('quota_rules')
              .values({ tenant_id: tenantId, name: rule.name, ...values, created_at: sql`now()`, updated_at: sql`now()` })
              .returningAll()
              .executeTakeFirstOrThrow();
        return { rule: toRule(row), created: !existing };
      });
    },

    async rules(tenantId: string, agentName?: string): Promise<QuotaRuleRow[]> {
      const rows = await db
        .selectFrom('quota_rules')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .$if(agentName !== undefined, (query) =>
          query.where((eb) => eb.or([eb('agent_name', 'is', null), eb('agent_name', '=', agentName!)])),
        )
        .orderBy('name')
        .execute();
      return rows.map(toRule);
    },

    /** Every tenant's rules (the quota usage gauge). */
    async allRules(): Promise<Array<QuotaRuleRow & { tenantId: string }>> {
      const rows = await db.selectFrom('quota_rules').selectAll().orderBy('tenant_id').orderBy('name').execute();
      return rows.map((row) => ({ ...toRule(row), tenantId: row.tenant_id }));
    },

    async deleteRule(tenantId: string, name: string): Promise<boolean> {
      const result = await db.deleteFrom('quota_rules').where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** What a metric used in [from, to), for one agent or (null) all of the tenant's. */
    async used(tenantId: string, metric: QuotaMetric, agentName: string | null, from: Date, to: Date): Promise<number> {
      const row = await db
        .selectFrom('quota_usage')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('used'), sql<number>`0`).as('used'))
        .where('tenant_id', '=', tenantId)
        .where('metric', '=', metric)
        .$if(agentName !== null, (query) => query.where('agent_name', '=', agentName!))
        .where('hour_start', '>=', from)
        .where('hour_start', '<', to)
        .executeTakeFirst();
      return Number(row?.used ?? 0);
    },

    /** The thresholds of a rule already announced in the window that starts at `windowStart`. */
    async noticed(tenantId: string, ruleName: string, windowStart: Date): Promise<number[]> {
      const rows = await db
        .selectFrom('quota_threshold_notices')
        .select('percent')
        .where('tenant_id', '=', tenantId)
        .where('rule_name', '=', ruleName)
        .where('window_start', '=', windowStart)
        .execute();
      return rows.map((row) => Number(row.percent));
    },

    /** Records that a threshold was announced; false when another announcement was recorded first. */
    async recordNotice(tenantId: string, ruleName: string, windowStart: Date, percent: number): Promise<boolean> {
      const inserted = await db
        .insertInto('quota_threshold_notices')
        .values({ tenant_id: tenantId, rule_name: ruleName, window_start: windowStart, percent })
        .onConflict((conflict) => conflict.columns(['tenant_id', 'rule_name', 'window_start', 'percent']).doNothing())
        .returning('percent')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    /**
     * Adds what one run event used, once: an event seen again (at-least-once delivery) changes
     * nothing. Returns whether it counted.
     */
    async count(
      event: { runId: string; seq: number; tenantId: string; agentName: string; at: Date },
      amounts: Array<{ metric: QuotaMetric; amount: number }>,
    ): Promise<boolean> {
      // One statement: the event is marked counted and its amounts added, or nothing happens when it was counted before.
      const hourStart = new Date(Math.floor(event.at.getTime() / 3_600_000) * 3_600_000);
      const counted = await db
        .with('fresh', (qb) =>
          qb
            .insertInto('quota_counted_events')
            .values({ run_id: event.runId, seq: event.seq, counted_at: sql`now()` })
            .onConflict((conflict) => conflict.columns(['run_id', 'seq']).doNothing())
            .returning('run_id'),
        )
        .insertInto('quota_usage')
        .columns(['tenant_id', 'agent_name', 'metric', 'hour_start', 'used'])
        .expression(
          sql`select ${event.tenantId}::text, ${event.agentName}::text, amount.metric, ${hourStart}::timestamptz, amount.used
            from fresh cross join unnest(${amounts.map((entry) => entry.metric)}::text[], ${amounts.map((entry) => entry.amount)}::float8[]) as amount(metric, used)`,
        )
        .onConflict((conflict) =>
          conflict
            .columns(['tenant_id', 'agent_name', 'metric', 'hour_start'])
            .doUpdateSet({ used: sql`quota_usage.used + excluded.used` }),
        )
        .returning('metric')
        .execute();
      return counted.length > 0;
    },
  };
}

export type QuotaRepository = ReturnType<typeof createQuotaRepository>;
