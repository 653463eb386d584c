import { sql, type Generated, type Kysely } from '@hangar/storage';
import type { EvaluationDatabase } from '../database.js';

/** Online evaluation's tables of the evaluation schema. */
export interface OnlineTables {
  online_scores: {
    run_id: string;
    tenant_id: string;
    agent_name: string;
    agent_version: number | null;
    score: number | null;
    reason: string | null;
    judge_run_id: string | null;
    created_at: Generated<Date>;
    scored_at: Date | null;
  };
  online_budget: { tenant_id: string; hour: Date; used: number };
}

export interface AgentScores {
  agentName: string;
  samples: number;
  meanScore: number;
  minScore: number;
  lastScoredAt: Date;
}

/** Online evaluation's sampled runs, their scores and the hourly budget; all its SQL. */
export function createOnlineRepository(db: Kysely<EvaluationDatabase>) {
  return {
    /** Takes the run for scoring; false when it was taken before (an event delivered again). */
    async claim(run: { runId: string; tenantId: string; agentName: string; agentVersion: number | null }): Promise<boolean> {
      const inserted = await db
        .insertInto('online_scores')
        .values({
          run_id: run.runId,
          tenant_id: run.tenantId,
          agent_name: run.agentName,
          agent_version: run.agentVersion,
          score: null,
          reason: null,
          judge_run_id: null,
          scored_at: null,
        })
        .onConflict((conflict) => conflict.column('run_id').doNothing())
        .returning('run_id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    /** Gives a claim up (the budget was spent, the judge failed): the run stays unscored. */
    async release(runId: string): Promise<void> {
      await db.deleteFrom('online_scores').where('run_id', '=', runId).where('score', 'is', null).execute();
    },

    /** Reserves one of the tenant's `max` scores of this clock hour; false when they are spent. */
    async reserve(tenantId: string, max: number): Promise<boolean> {
      const reserved = await db
        .insertInto('online_budget')
        .values({ tenant_id: tenantId, hour: sql<Date>`date_trunc('hour', now())`, used: 1 })
        .onConflict((conflict) =>
          conflict
            .columns(['tenant_id', 'hour'])
            .doUpdateSet({ used: sql<number>`online_budget.used + 1` })
            .where('online_budget.used', '<', max),
        )
        .returning('used')
        .executeTakeFirst();
      return reserved !== undefined && reserved.used <= max;
    },

    async record(runId: string, score: { score: number; reason: string; judgeRunId: string | null }): Promise<void> {
      await db
        .updateTable('online_scores')
        .set({ score: score.score, reason: score.reason, judge_run_id: score.judgeRunId, scored_at: sql<Date>`now()` })
        .where('run_id', '=', runId)
        .execute();
    },

    /** The scores of an agent's runs since `since`, per version. */
    async byVersion(tenantId: string, agentName: string, since: Date): Promise<Map<number, { samples: number; meanScore: number }>> {
      const rows = await db
        .selectFrom('online_scores')
        .select((eb) => ['agent_version', eb.fn.countAll<string>().as('samples'), eb.fn.avg<string>('score').as('mean')])
        .where('tenant_id', '=', tenantId)
        .where('agent_name', '=', agentName)
        .where('scored_at', '>=', since)
        .where('agent_version', 'is not', null)
        .groupBy('agent_version')
        .execute();
      return new Map(rows.map((row) => [row.agent_version!, { samples: Number(row.samples), meanScore: Number(row.mean) }]));
    },

    /** Each agent's scores since `since`, by agent name. */
    async summary(tenantId: string, since: Date): Promise<AgentScores[]> {
      const rows = await db
        .selectFrom('online_scores')
        .select((eb) => [
          'agent_name',
          eb.fn.countAll<string>().as('samples'),
          eb.fn.avg<string>('score').as('mean'),
          eb.fn.min<number>('score').as('min'),
          eb.fn.max<Date>('scored_at').as('last'),
        ])
        .where('tenant_id', '=', tenantId)
        .where('scored_at', '>=', since)
        .groupBy('agent_name')
        .orderBy('agent_name')
        .execute();
      return rows.map((row) => ({
        agentName: row.agent_name,
        samples: Number(row.samples),
        meanScore: Number(row.mean),
        minScore: Number(row.min),
        lastScoredAt: new Date(row.last),
      }));
    },
  };
}

export type OnlineRepository = ReturnType<typeof createOnlineRepository>;
