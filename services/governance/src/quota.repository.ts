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

/** An event quotas count, with what it adds to each metric. */
export interface CountedEvent {
  runId: string;
  seq: number;
  tenantId: string;
  agentName: string;
  at: Date;
  amounts: Array<{ metric: QuotaMetric; amount: number }>;
}

interface IncomingAmount {
  run_id: string;
  seq: number;
  tenant_id: string;
  agent_name: string;
  hour_start: Date;
  metric: QuotaMetric;
  used: number;
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
     * Marks each event counted and adds its amounts to its hour, in one statement, for the events
     * not counted before (delivery is at-least-once, and a batch may hold one event twice).
     * Answers the events counted now, as `runId:seq`.
     */
    async countEvents(events: CountedEvent[]): Promise<Set<string>> {
      const rows = events.flatMap((event) =>
        event.amounts.map((amount) => ({
          ...event,
          hourStart: new Date(Math.floor(event.at.getTime() / 3_600_000) * 3_600_000),
          ...amount,
        })),
      );
      if (!rows.length) return new Set();
      const column = <T>(pick: (row: (typeof rows)[number]) => T) => rows.map(pick);
      const counted = await db
        .with(
          'incoming',
          () =>
            // Kysely puts a raw CTE body in as written: the parentheses are ours.
            sql<IncomingAmount>`(select distinct on (run_id, seq, metric) * from unnest(
            ${column((row) => row.runId)}::uuid[], ${column((row) => row.seq)}::int[], ${column((row) => row.tenantId)}::text[],
            ${column((row) => row.agentName)}::text[], ${column((row) => row.hourStart)}::timestamptz[],
            ${column((row) => row.metric)}::text[], ${column((row) => row.amount)}::float8[]
          ) as amount(run_id, seq, tenant_id, agent_name, hour_start, metric, used))`,
        )
        .with('fresh', (qb) =>
          qb
            .insertInto('quota_counted_events')
            .columns(['run_id', 'seq', 'counted_at'])
            .expression((eb) =>
              eb
                .selectFrom('incoming')
                .select(['run_id', 'seq', sql<Date>`now()`.as('counted_at')])
                .distinct(),
            )
            .onConflict((conflict) => conflict.columns(['run_id', 'seq']).doNothing())
            .returning(['run_id', 'seq']),
        )
        .with('added', (qb) =>
          qb
            .insertInto('quota_usage')
            .columns(['tenant_id', 'agent_name', 'metric', 'hour_start', 'used'])
            .expression((eb) =>
              eb
                .selectFrom('incoming')
                .innerJoin('fresh', (join) => join.onRef('fresh.run_id', '=', 'incoming.run_id').onRef('fresh.seq', '=', 'incoming.seq'))
                .select(['tenant_id', 'agent_name', 'metric', 'hour_start', eb.fn.sum<number>('used').as('used')])
                .groupBy(['tenant_id', 'agent_name', 'metric', 'hour_start']),
            )
            .onConflict((conflict) =>
              conflict
                .columns(['tenant_id', 'agent_name', 'metric', 'hour_start'])
                .doUpdateSet({ used: sql`quota_usage.used + excluded.used` }),
            ),
        )
        .selectFrom('fresh')
        .select(['run_id', 'seq'])
        .execute();
      return new Set(counted.map((row) => `${row.run_id}:${row.seq}`));
    },
  };
}

export type QuotaRepository = ReturnType<typeof createQuotaRepository>;
