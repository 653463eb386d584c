import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from '@hangar/storage';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateOf, type CaseResult, type EvalCase } from '../src/suites/eval.model.js';
import type { EvaluationDatabase } from '../src/database.js';
import { createEvaluationRepository, type EvaluationRepository } from '../src/suites/eval.repository.js';
import { EVALUATION_SCHEMA, evaluationMigrations } from '../src/migrations/index.js';

const CASES: EvalCase[] = [
  { id: 'a', input: 'one', parameters: {}, expected: '1', graders: [{ kind: 'exact' }] },
  { id: 'b', input: 'two', parameters: { tone: 'dry' }, graders: [{ kind: 'regex', pattern: '2' }] },
];
const caller = { tenantId: 'acme', actor: 'tester' };

const result = (caseId: string, status: CaseResult['status'], score: number): CaseResult => ({
  caseId,
  input: caseId,
  status,
  score,
  output: `answer ${caseId}`,
  graders: [],
  cost: 0.5,
  inputTokens: 10,
  outputTokens: 3,
  latencyMs: 40,
});

describe.each(SQL_ENGINES)('evaluation repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<EvaluationDatabase>;
  let repository: EvaluationRepository;

  const queue = async (tenantId = 'acme', suiteName = 'smoke') => {
    const { suite } = await repository.putSuite(tenantId, suiteName, '', CASES);
    return repository.createRun({
      id: randomUUID(),
      tenantId,
      suite,
      agentName: 'student',
      agentVersion: 3,
      caller: { ...caller, tenantId },
    });
  };
  /** Claims until the wanted run is among them (other tests' runs may be queued first). */
  const claimUntil = async (id: string, owner: string, leaseMs = 30_000) => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const claimed = await repository.claimRuns(owner, leaseMs, 100);
      const found = claimed.find((run) => run.id === id);
      if (found) return found;
    }
    throw new Error(`run ${id} was never claimed`);
  };

  beforeAll(async () => {
    fixture = await openEngine(engine);
    ({ db } = await fixture.storage.open<EvaluationDatabase>(EVALUATION_SCHEMA, evaluationMigrations));
    repository = createEvaluationRepository(db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('creates a suite at version 1, replaces it as version 2, and keeps each tenant’s apart', async () => {
    const first = await repository.putSuite('acme', 'versions', 'first', CASES);
    expect(first).toMatchObject({ created: true, suite: { version: 1, description: 'first', cases: CASES } });
    const second = await repository.putSuite('acme', 'versions', 'second', CASES.slice(0, 1));
    expect(second).toMatchObject({ created: false, suite: { version: 2, description: 'second', cases: CASES.slice(0, 1) } });
    expect(await repository.getSuite('globex', 'versions')).toBeUndefined();
    expect((await repository.listSuites('acme')).find((suite) => suite.name === 'versions')).toMatchObject({ version: 2, cases: [] });
  });

  it('leases a queued run to one claimer only, lets a second take it once the lease expired, and keeps the first result of a case', async () => {
    const run = await queue();
    const claimed = await claimUntil(run.id, 'first');
    expect(claimed).toMatchObject({ tenantId: 'acme', cases: CASES, agentName: 'student', agentVersion: 3, caller, failures: 0 });
    expect((await repository.claimRuns('second', 30_000, 100)).map((other) => other.id)).not.toContain(run.id);
    expect(await repository.storeResult(run.id, 'first', 0, result('a', 'Passed', 1))).toBe(true);
    // The holder died: its lease runs out.
    await db
      .updateTable('suite_runs')
      .set({ lease_expires_at: sql<Date>`now() - interval '1 second'` })
      .where('id', '=', run.id)
      .execute();
    expect(await repository.heartbeat(run.id, 'first', 30_000)).toBe(true); // an expired lease is still its holder's until taken
    await db
      .updateTable('suite_runs')
      .set({ lease_expires_at: sql<Date>`now() - interval '1 second'` })
      .where('id', '=', run.id)
      .execute();
    await claimUntil(run.id, 'second');
    expect(await repository.heartbeat(run.id, 'first', 30_000)).toBe(false);
    expect(await repository.donePositions(run.id)).toEqual(new Set([0]));
    // The old holder, still grading, stores nothing now.
    expect(await repository.storeResult(run.id, 'first', 1, result('b', 'Passed', 1))).toBe(false);
    expect(await repository.storeResult(run.id, 'second', 0, result('a', 'Failed', 0))).toBe(true); // graded twice: the first stands
    expect(await repository.storeResult(run.id, 'second', 1, result('b', 'Failed', 0))).toBe(true);
    const results = await repository.results(run.id);
    expect(results.map((entry) => entry.status)).toEqual(['Passed', 'Failed']);
    expect(await repository.finish(run.id, 'first', 'Completed', aggregateOf(results, 2), null)).toBe(false);
    expect(await repository.finish(run.id, 'second', 'Completed', aggregateOf(results, 2), null)).toBe(true);
    const found = await repository.getRun('acme', run.id);
    expect(found?.run).toMatchObject({ status: 'Completed', casesDone: 2, aggregate: { passed: 1, failed: 1, passRate: 0.5, cost: 1 } });
    expect(found?.run.completedAt).toBeInstanceOf(Date);
    expect(await repository.getRun('globex', run.id)).toBeUndefined();
    expect((await repository.claimRuns('third', 30_000, 100)).map((other) => other.id)).not.toContain(run.id);
  });

  it('cancels a queued run (never claimed) and a running one (its holder’s heartbeat and finish fail), of its tenant only, once', async () => {
    const queued = await queue();
    expect(await repository.cancelRun('globex', queued.id)).toBe(false);
    expect(await repository.cancelRun('acme', queued.id)).toBe(true);
    expect(await repository.cancelRun('acme', queued.id)).toBe(false);
    expect((await repository.claimRuns('first', 30_000, 100)).map((other) => other.id)).not.toContain(queued.id);
    expect((await repository.getRun('acme', queued.id))?.run).toMatchObject({ status: 'Canceled', casesDone: 0 });

    const running = await queue();
    await claimUntil(running.id, 'holder');
    await repository.storeResult(running.id, 'holder', 0, result('a', 'Passed', 1));
    expect(await repository.cancelRun('acme', running.id)).toBe(true);
    expect(await repository.storeResult(running.id, 'holder', 1, result('b', 'Passed', 1))).toBe(false);
    expect(await repository.heartbeat(running.id, 'holder', 30_000)).toBe(false);
    expect(await repository.finish(running.id, 'holder', 'Completed', aggregateOf([], 2), null)).toBe(false);
    const found = (await repository.getRun('acme', running.id))?.run;
    // The summary is that of the case done before the cancel.
    expect(found).toMatchObject({ status: 'Canceled', casesDone: 1, aggregate: { cases: 2, passed: 1 } });
    expect(found?.completedAt).toBeInstanceOf(Date);
    expect((await repository.claimRuns('other', 30_000, 100)).map((other) => other.id)).not.toContain(running.id);
  });

  it('gives a run back: at once when its holder stops, later and counted when it failed', async () => {
    const run = await queue();
    await claimUntil(run.id, 'first');
    await repository.release(run.id, 'first');
    expect(await claimUntil(run.id, 'second')).toMatchObject({ failures: 0, error: null });
    await repository.release(run.id, 'second', { error: 'run executor away', afterMs: 60_000 });
    expect((await repository.claimRuns('third', 30_000, 100)).map((other) => other.id)).not.toContain(run.id);
    await db
      .updateTable('suite_runs')
      .set({ lease_expires_at: sql<Date>`now() - interval '1 second'` })
      .where('id', '=', run.id)
      .execute();
    expect(await claimUntil(run.id, 'third')).toMatchObject({ failures: 1, error: 'run executor away' });
  });

  it('shows a run still going with its aggregate so far, lists newest first, and deletes runs with their suite', async () => {
    const older = await queue('initech', 'listing');
    const newer = await queue('initech', 'listing');
    await claimUntil(newer.id, 'worker');
    await repository.storeResult(newer.id, 'worker', 1, result('b', 'Passed', 1));
    const listed = await repository.listRuns('initech', 'listing', 10);
    expect(listed.map((run) => run.id)).toEqual([newer.id, older.id]);
    expect(listed[0]).toMatchObject({ status: 'Running', casesDone: 1, aggregate: { cases: 2, passed: 1, passRate: 0.5 } });
    expect(await repository.deleteSuite('initech', 'listing')).toBe(true);
    expect(await repository.getRun('initech', newer.id)).toBeUndefined();
    expect(await repository.results(newer.id)).toEqual([]);
    expect(await repository.deleteSuite('initech', 'listing')).toBe(false);
  });
});
