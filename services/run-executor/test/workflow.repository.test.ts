import { randomUUID } from 'node:crypto';
import { openEngine, SQL_ENGINES, type EngineFixture } from '@hangar/testing';
import { purgeInBatches, sql, type Kysely } from '@hangar/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunDatabase } from '../src/database.js';
import { runMigrations } from '../src/migrations/index.js';
import { RUN_RETENTION_TARGETS } from '../src/retention/retention-targets.js';
import type { NewRun } from '../src/runs/run.model.js';
import { initialState } from '../src/workflows/workflow-graph.js';
import type { WorkflowDefinition, WorkflowRunRow } from '../src/workflows/workflow.model.js';
import { createWorkflowRepository } from '../src/workflows/workflow.repository.js';

/** Workflows on both engines: versions, one lease per run however many instances claim, answers that wake a paused run once, retention. */
describe.each(SQL_ENGINES)('workflow repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<RunDatabase>;
  let schema: string;
  let workflows: ReturnType<typeof createWorkflowRepository>;
  const caller = { tenantId: 't1', actor: 'auth-token', role: 'Operator' };
  const definition: WorkflowDefinition = {
    steps: [
      { id: 'ask', kind: 'input', prompt: 'Go?' },
      { id: 'done', kind: 'transform', template: '{{ask}}' },
    ],
    edges: [{ from: 'ask', to: 'done' }],
  };

  async function queued(tenantId = 't1'): Promise<string> {
    const id = randomUUID();
    const run: NewRun = {
      id,
      agentName: 'flow',
      agentVersion: 1,
      sessionId: null,
      kind: 'Workflow',
      isStreaming: false,
      rootRunId: id,
      parentRunId: null,
      depth: 0,
      userId: null,
      labels: {},
    };
    await workflows.createRun(
      tenantId,
      run,
      { name: 'flow', version: 1, definition },
      { input: { topic: 'x' }, parameters: { tone: 'dry' }, caller: { ...caller, tenantId }, state: initialState(definition) },
    );
    return id;
  }
  const phaseOf = async (runId: string) =>
    (await db.selectFrom('workflow_runs').select(['phase', 'lease_owner']).where('run_id', '=', runId).executeTakeFirstOrThrow()).phase;

  beforeAll(async () => {
    fixture = await openEngine(engine);
    ({ db, schema } = await fixture.storage.open<RunDatabase>('runs', runMigrations));
    workflows = createWorkflowRepository(db);
  });
  afterAll(async () => {
    await fixture?.close();
  });

  it('stores each save as the next version, per tenant, and deletes them all', async () => {
    const first = await workflows.putVersion('t1', 'flow', definition);
    const second = await workflows.putVersion('t1', 'flow', { ...definition, description: 'v2' });
    expect(first).toMatchObject({ created: true, workflow: { version: 1 } });
    expect(second).toMatchObject({ created: false, workflow: { version: 2, definition: { description: 'v2' } } });
    expect(second!.workflow.createdAt).toEqual(first!.workflow.createdAt);
    expect((await workflows.putVersion('t2', 'flow', definition))!.workflow.version).toBe(1);
    expect((await workflows.get('t1', 'flow', 1))!.definition.description).toBeUndefined();
    expect((await workflows.list('t1')).map((workflow) => [workflow.name, workflow.version])).toEqual([['flow', 2]]);
    expect(await workflows.delete('t1', 'flow')).toBe(true);
    expect(await workflows.get('t1', 'flow')).toBeUndefined();
    expect((await workflows.get('t2', 'flow'))!.version).toBe(1);
    expect(await workflows.delete('t1', 'flow')).toBe(false);
  });

  it('gives a run to one of many claimers, renews only the holder’s lease, and lets another take it once it expired', async () => {
    await db.deleteFrom('workflow_runs').execute();
    const runId = await queued();
    const claims = await Promise.all(['a', 'b', 'c', 'd'].map((owner) => workflows.claimRuns(owner, 60_000, 5)));
    const winners = claims.flatMap((claimed, index) => (claimed.length ? [index] : []));
    expect(winners).toHaveLength(1);
    const [held] = claims[winners[0]];
    expect(held).toMatchObject({
      id: runId,
      status: 'Queued',
      input: { topic: 'x' },
      parameters: { tone: 'dry' },
      state: { superStep: 1, active: ['ask'] },
    });
    const owner = ['a', 'b', 'c', 'd'][winners[0]];
    expect(await workflows.renewLease(runId, 'someone-else', 60_000)).toBe(false);
    expect(await workflows.renewLease(runId, owner, 60_000)).toBe(true);
    await db
      .updateTable('workflow_runs')
      .set({ lease_expires_at: sql<Date>`now() - interval '1 second'` })
      .execute();
    expect((await workflows.claimRuns('e', 60_000, 5)).map((run) => run.id)).toEqual([runId]);
    expect(await workflows.saveState(held, owner, held.state, 10)).toBe(false);
    expect(await workflows.saveState(held, 'e', { ...held.state, done: ['ask'] }, 10)).toBe(true);
    expect((await workflows.getRun('t1', runId))!.state.done).toEqual(['ask']);
    expect(await workflows.getRun('t2', runId)).toBeUndefined();
  });

  it('asks once per step and super step; the last answer makes a paused run ready and Running again', async () => {
    await db.deleteFrom('workflow_runs').execute();
    const runId = await queued();
    const [run] = (await workflows.claimRuns('w', 60_000, 1)) as [WorkflowRunRow];
    const asked = await workflows.ask(run, 1, 'ask', 'Go?');
    expect(await workflows.ask(run, 1, 'ask', 'Go?')).toEqual(asked);
    const other = await workflows.ask(run, 1, 'other', 'And?');
    expect(await workflows.pause(run, 'someone-else', run.state, 5)).toBe('lost');
    expect(await workflows.pause(run, 'w', run.state, 5)).toBe('waiting');
    expect(await phaseOf(runId)).toBe('waiting');
    expect((await db.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirstOrThrow()).status).toBe(5);
    expect(await workflows.claimRuns('w2', 60_000, 5)).toEqual([]);

    expect(await workflows.answer('t1', runId, asked.id, 'yes', 'rita')).toEqual({ ready: false });
    expect(await workflows.answer('t1', runId, asked.id, 'again', 'rita')).toBeUndefined();
    expect(await phaseOf(runId)).toBe('waiting');
    expect(await workflows.answer('t1', runId, other.id, { n: 1 }, 'rita')).toEqual({ ready: true });
    expect(await phaseOf(runId)).toBe('ready');
    expect((await db.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirstOrThrow()).status).toBe(1);
    expect(
      (await workflows.requests('t1', runId)).map((request) => [request.stepId, request.status, request.answer, request.answeredBy]),
    ).toEqual([
      ['ask', 'Answered', 'yes', 'rita'],
      ['other', 'Answered', { n: 1 }, 'rita'],
    ]);
    expect((await workflows.claimRuns('w2', 60_000, 5)).map((claimed) => claimed.id)).toEqual([runId]);
  });

  it('wakes a paused run exactly once when its last two questions are answered at the same time', async () => {
    await db.deleteFrom('workflow_runs').execute();
    for (let round = 0; round < 5; round++) {
      const runId = await queued();
      const [run] = (await workflows.claimRuns('w', 60_000, 1)) as [WorkflowRunRow];
      const questions = await Promise.all(['a', 'b', 'c'].map((step) => workflows.ask(run, 1, step, '?')));
      expect(await workflows.pause(run, 'w', run.state, 5)).toBe('waiting');
      await workflows.answer('t1', runId, questions[0].id, 'first', 'rita');
      const answers = await Promise.all(
        questions.slice(1).map((question) => workflows.answer('t1', runId, question.id, 'at once', 'rita')),
      );
      expect(answers.filter((answer) => answer?.ready)).toHaveLength(1);
      expect(await phaseOf(runId)).toBe('ready');
      await db.updateTable('workflow_runs').set({ phase: 'ended' }).where('run_id', '=', runId).execute();
    }
  });

  it('lets a canceler take only a run nobody holds', async () => {
    await db.deleteFrom('workflow_runs').execute();
    const runId = await queued();
    expect(await workflows.takeIdle('t2', runId, 'canceler', 60_000)).toBeUndefined();
    const [run] = (await workflows.claimRuns('w', 60_000, 1)) as [WorkflowRunRow];
    expect(await workflows.takeIdle('t1', runId, 'canceler', 60_000)).toBeUndefined();
    await workflows.ask(run, 1, 'ask', '?');
    expect(await workflows.pause(run, 'w', run.state, 5)).toBe('waiting');
    expect(await workflows.takeIdle('t1', runId, 'canceler', 60_000)).toMatchObject({ id: runId });
    expect(await workflows.holdsLease(runId, 'canceler')).toBe(true);
    expect(await workflows.holdsLease(runId, 'w')).toBe(false);
  });

  it('does not pause a run whose answers all came while it executed; checkpoints once per super step', async () => {
    await db.deleteFrom('workflow_runs').execute();
    const runId = await queued();
    const [run] = (await workflows.claimRuns('w', 60_000, 1)) as [WorkflowRunRow];
    const asked = await workflows.ask(run, 1, 'ask', 'Go?');
    await workflows.answer('t1', runId, asked.id, 'yes', 'rita');
    // It stays with its holder, which goes on at once.
    expect(await workflows.pause(run, 'w', run.state, 5)).toBe('ready');
    expect(await phaseOf(runId)).toBe('ready');
    expect(await workflows.holdsLease(runId, 'w')).toBe(true);
    expect(await workflows.claimRuns('w2', 60_000, 5)).toEqual([]);
    const checkpoint = await workflows.checkpoint(run, 'w', run.state);
    expect(checkpoint).toEqual(expect.any(String));
    expect(await workflows.checkpoint(run, 'w', run.state)).toBe(checkpoint);
    expect(await workflows.checkpoint(run, 'w2', { ...run.state, superStep: 2 })).toBeUndefined();
    expect((await workflows.checkpoints('t1', runId)).map((row) => [row.id, row.superStep])).toEqual([[checkpoint, 1]]);
    expect(await workflows.saveState(run, 'w2', run.state, 9, 'not mine')).toBe(false);
    await workflows.end(runId, 'w2');
    expect(await phaseOf(runId)).toBe('ready');
    expect(await workflows.saveState(run, 'w', run.state, 9, 'done')).toBe(true);
    await workflows.end(runId, 'w');
    expect(await phaseOf(runId)).toBe('ended');
    expect((await workflows.getRun('t1', runId))!.output).toBe('done');
    expect(await workflows.claimRuns('w', 60_000, 5)).toEqual([]);
    await workflows.dropCheckpoints(runId);
    expect(await workflows.checkpoints('t1', runId)).toEqual([]);
  });

  it('purges checkpoints by the age of their run’s end (WorkflowCheckpoints), never those of a run still going', async () => {
    await db.deleteFrom('workflow_runs').execute();
    const [endedId, goingId] = [await queued(), await queued()];
    const claimed = await workflows.claimRuns('w', 60_000, 2);
    for (const run of claimed) await workflows.checkpoint(run, 'w', run.state);
    await workflows.end(endedId, 'w');
    const purge = (cutoff: Date) =>
      purgeInBatches(db, schema, RUN_RETENTION_TARGETS.WorkflowCheckpoints, { cutoff, archive: false, batchSize: 10, batchDelayMs: 0 });
    expect(await purge(new Date(Date.now() - 60_000))).toEqual({ deleted: 0, archived: 0 });
    expect(await purge(new Date(Date.now() + 60_000))).toEqual({ deleted: 1, archived: 0 });
    expect(await workflows.checkpoints('t1', endedId)).toEqual([]);
    expect(await workflows.checkpoints('t1', goingId)).toHaveLength(1);
  });
});
