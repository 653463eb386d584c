import { jsonb, sql, type Generated, type Kysely, type Selectable } from '@hangar/storage';
import type { Caller } from '@hangar/platform';
import type { EvaluationDatabase } from '../database.js';
import {
  aggregateOf,
  type Aggregate,
  type CaseResult,
  type EvalCase,
  type SuiteRecord,
  type SuiteRunRecord,
  type SuiteRunStatus,
} from './eval.model.js';

/** The suite tables of the evaluation schema (database.ts has them all). */
export interface SuiteTables {
  suites: {
    tenant_id: string;
    name: string;
    description: string;
    version: number;
    cases: unknown;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  suite_runs: {
    id: string;
    tenant_id: string;
    suite: string;
    suite_version: number;
    cases: unknown;
    agent_name: string;
    agent_version: number | null;
    caller: unknown;
    status: string;
    aggregate: unknown | null;
    error: string | null;
    failures: Generated<number>;
    lease_owner: string | null;
    lease_expires_at: Date | null;
    created_at: Generated<Date>;
    started_at: Date | null;
    completed_at: Date | null;
  };
  case_results: {
    suite_run_id: string;
    position: number;
    tenant_id: string;
    case_id: string;
    status: string;
    score: number;
    result: unknown;
    created_at: Generated<Date>;
  };
}

/** A suite run an instance holds the lease of: what executing it needs. */
export interface ClaimedSuiteRun {
  id: string;
  tenantId: string;
  cases: EvalCase[];
  agentName: string;
  agentVersion: number | null;
  caller: Caller;
  /** Times an instance gave it back after an error, and the last such error. */
  failures: number;
  error: string | null;
}

type SuiteRow = Selectable<SuiteTables['suites']>;
type RunRow = Selectable<SuiteTables['suite_runs']> & { cases_done: number | string | null };

const toSuite = (row: SuiteRow): SuiteRecord => ({
  name: row.name,
  description: row.description,
  version: row.version,
  cases: row.cases as EvalCase[],
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toRun = (row: RunRow, results?: CaseResult[]): SuiteRunRecord => {
  const total = (row.cases as EvalCase[]).length;
  return {
    id: row.id,
    suite: row.suite,
    suiteVersion: row.suite_version,
    agentName: row.agent_name,
    agentVersion: row.agent_version,
    status: row.status as SuiteRunStatus,
    casesDone: Number(row.cases_done),
    // A finished run's aggregate is stored; one still going (or canceled) is computed from its results.
    aggregate: (row.aggregate as Aggregate | null) ?? aggregateOf(results ?? [], total),
    error: row.error,
    createdAt: row.created_at,
    startedAt: row.started_at,
    completedAt: row.completed_at,
  };
};

/** Suites, suite runs (with their leases) and case results; all SQL of the evaluation service. */
export function createEvaluationRepository(db: Kysely<EvaluationDatabase>) {
  const runs = () =>
    db
      .selectFrom('suite_runs as r')
      .selectAll('r')
      .select((eb) =>
        eb
          .selectFrom('case_results as c')
          .whereRef('c.suite_run_id', '=', 'r.id')
          .select(eb.fn.countAll<number>().as('n'))
          .as('cases_done'),
      );

  async function results(suiteRunId: string): Promise<CaseResult[]> {
    const rows = await db.selectFrom('case_results').select('result').where('suite_run_id', '=', suiteRunId).orderBy('position').execute();
    return rows.map((row) => row.result as CaseResult);
  }

  return {
    /** Creates the suite at version 1, or replaces its cases as the next version. */
    async putSuite(
      tenantId: string,
      name: string,
      description: string,
      cases: EvalCase[],
    ): Promise<{ suite: SuiteRecord; created: boolean }> {
      const row = await db
        .insertInto('suites')
        .values({ tenant_id: tenantId, name, description, version: 1, cases: jsonb(cases) })
        .onConflict((conflict) =>
          conflict.columns(['tenant_id', 'name']).doUpdateSet({
            description,
            cases: jsonb(cases),
            version: sql<number>`suites.version + 1`,
            updated_at: sql<Date>`now()`,
          }),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      return { suite: toSuite(row), created: row.version === 1 };
    },

    async getSuite(tenantId: string, name: string): Promise<SuiteRecord | undefined> {
      const row = await db.selectFrom('suites').selectAll().where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
      return row && toSuite(row);
    },

    /** The tenant's suites by name, without their cases. */
    async listSuites(tenantId: string): Promise<SuiteRecord[]> {
      const rows = await db
        .selectFrom('suites')
        .select(['name', 'description', 'version', 'created_at', 'updated_at'])
        .where('tenant_id', '=', tenantId)
        .orderBy('name')
        .execute();
      return rows.map((row) => ({ ...toSuite({ ...row, tenant_id: tenantId, cases: [] }) }));
    },

    /** Deletes the suite with its runs and their results; false when there was none. */
    async deleteSuite(tenantId: string, name: string): Promise<boolean> {
      const deleted = await db.deleteFrom('suites').where('tenant_id', '=', tenantId).where('name', '=', name).executeTakeFirst();
      return deleted.numDeletedRows > 0n;
    },

    async createRun(input: {
      id: string;
      tenantId: string;
      suite: SuiteRecord;
      agentName: string;
      agentVersion: number | null;
      caller: Caller;
    }): Promise<SuiteRunRecord> {
      const row = await db
        .insertInto('suite_runs')
        .values({
          id: input.id,
          tenant_id: input.tenantId,
          suite: input.suite.name,
          suite_version: input.suite.version,
          cases: jsonb(input.suite.cases),
          agent_name: input.agentName,
          agent_version: input.agentVersion,
          caller: jsonb(input.caller),
          status: 'Queued',
          aggregate: null,
          error: null,
          lease_owner: null,
          lease_expires_at: null,
          started_at: null,
          completed_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRun({ ...row, cases_done: 0 }, []);
    },

    async getRun(tenantId: string, id: string): Promise<{ run: SuiteRunRecord; results: CaseResult[] } | undefined> {
      const row = await runs().where('r.tenant_id', '=', tenantId).where('r.id', '=', id).executeTakeFirst();
      if (!row) return undefined;
      const found = await results(id);
      return { run: toRun(row, found), results: found };
    },

    /** The suite's latest runs first (at most `limit`); a run still going shows its aggregate so far. */
    async listRuns(tenantId: string, suite: string, limit: number): Promise<SuiteRunRecord[]> {
      const rows = await runs()
        .where('r.tenant_id', '=', tenantId)
        .where('r.suite', '=', suite)
        .orderBy('r.created_at', 'desc')
        .limit(limit)
        .execute();
      return Promise.all(rows.map(async (row) => toRun(row, row.aggregate ? undefined : await results(row.id))));
    },

    results,

    /**
     * Leases up to `limit` unfinished suite runs that nobody holds (queued, or whose holder's lease
     * expired: it died), oldest first, skipping those another instance is claiming at the same moment.
     */
    async claimRuns(owner: string, leaseMs: number, limit: number): Promise<ClaimedSuiteRun[]> {
      const rows = await db
        .updateTable('suite_runs')
        .set({
          status: 'Running',
          lease_owner: owner,
          lease_expires_at: sql<Date>`now() + ${`${leaseMs} milliseconds`}::interval`,
          started_at: sql<Date>`coalesce(started_at, now())`,
        })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('suite_runs')
            .select('id')
            .where('completed_at', 'is', null)
            .where((where) => where.or([where('lease_expires_at', 'is', null), where('lease_expires_at', '<', sql<Date>`now()`)]))
            .orderBy('created_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returning(['id', 'tenant_id', 'cases', 'agent_name', 'agent_version', 'caller', 'failures', 'error'])
        .execute();
      return rows.map((row) => ({
        id: row.id,
        tenantId: row.tenant_id,
        cases: row.cases as EvalCase[],
        agentName: row.agent_name,
        agentVersion: row.agent_version,
        caller: row.caller as Caller,
        failures: row.failures,
        error: row.error,
      }));
    },

    /** Extends a lease this instance still holds; false when it lost it. */
    async heartbeat(id: string, owner: string, leaseMs: number): Promise<boolean> {
      const updated = await db
        .updateTable('suite_runs')
        .set({ lease_expires_at: sql<Date>`now() + ${`${leaseMs} milliseconds`}::interval` })
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .where('completed_at', 'is', null)
        .executeTakeFirst();
      return updated.numUpdatedRows > 0n;
    },

    /**
     * Gives a lease back for any instance to take again: at once when this one stops, after
     * `afterMs` when it failed with `error` (a run executor that was away), counting the failure.
     */
    async release(id: string, owner: string, failed?: { error: string; afterMs: number }): Promise<void> {
      await db
        .updateTable('suite_runs')
        .set({
          lease_owner: null,
          lease_expires_at: failed ? sql<Date>`now() + ${`${failed.afterMs} milliseconds`}::interval` : null,
          ...(failed && { failures: sql<number>`failures + 1`, error: failed.error }),
        })
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .execute();
    },

    /** The positions of the cases that have a result. */
    async donePositions(suiteRunId: string): Promise<Set<number>> {
      const rows = await db.selectFrom('case_results').select('position').where('suite_run_id', '=', suiteRunId).execute();
      return new Set(rows.map((row) => row.position));
    },

    /**
     * Stores a case's result once (a case graded twice, a lease taken over mid-case, keeps the
     * first), and only while `owner` holds the unfinished run: the row is locked against a cancel
     * or a takeover for the insert. False when `owner` no longer holds it; nothing is stored then.
     */
    async storeResult(suiteRunId: string, owner: string, position: number, result: CaseResult): Promise<boolean> {
      return db.transaction().execute(async (trx) => {
        const held = await trx
          .selectFrom('suite_runs')
          .select('tenant_id')
          .where('id', '=', suiteRunId)
          .where('lease_owner', '=', owner)
          .where('completed_at', 'is', null)
          .forUpdate()
          .executeTakeFirst();
        if (!held) return false;
        await trx
          .insertInto('case_results')
          .values({
            suite_run_id: suiteRunId,
            position,
            tenant_id: held.tenant_id,
            case_id: result.caseId,
            status: result.status,
            score: result.score,
            result: jsonb(result),
          })
          .onConflict((conflict) => conflict.columns(['suite_run_id', 'position']).doNothing())
          .execute();
        return true;
      });
    },

    /**
     * Ends a queued or running suite run as Canceled, whoever holds it: its holder finds the lease
     * gone at its next heartbeat and stops its cases. Its aggregate is not frozen: it stays that of
     * the results stored. False when it had already ended (or is not the tenant's).
     */
    async cancelRun(tenantId: string, id: string): Promise<boolean> {
      const updated = await db
        .updateTable('suite_runs')
        .set({ status: 'Canceled', completed_at: sql<Date>`now()`, lease_owner: null, lease_expires_at: null })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', id)
        .where('completed_at', 'is', null)
        .executeTakeFirst();
      return updated.numUpdatedRows > 0n;
    },

    /** Ends a suite run this instance holds; false when it lost the lease. */
    async finish(id: string, owner: string, status: 'Completed' | 'Failed', aggregate: Aggregate, error: string | null): Promise<boolean> {
      const updated = await db
        .updateTable('suite_runs')
        .set({ status, aggregate: jsonb(aggregate), error, completed_at: sql<Date>`now()`, lease_owner: null, lease_expires_at: null })
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .where('completed_at', 'is', null)
        .executeTakeFirst();
      return updated.numUpdatedRows > 0n;
    },
  };
}

export type EvaluationRepository = ReturnType<typeof createEvaluationRepository>;
