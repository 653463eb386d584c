import { randomUUID } from 'node:crypto';
import { openEngine, SQL_ENGINES, type EngineFixture, sealingCipher } from '@hangar/testing';
import { jsonb, sql, type Kysely } from '@hangar/storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApprovalRepository } from '../src/approvals/approval.repository.js';
import type { RunDatabase } from '../src/database.js';
import { createEventRepository } from '../src/events/event.repository.js';
import { createScoreRepository } from '../src/feedback/score.repository.js';
import { createJobRepository } from '../src/jobs/job.repository.js';
import { runMigrations } from '../src/migrations/index.js';
import { createReconciliationRepository } from '../src/reconciliation/reconciliation.repository.js';
import type { NewRun } from '../src/runs/run.model.js';
import { createRunRepository } from '../src/runs/run.repository.js';
import { createSpanRepository } from '../src/traces/span.repository.js';

/** The trickiest SQL of the run executor, on both engines: job leases, orphan claims and the outbox. */
describe.each(SQL_ENGINES)('run executor stores on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<RunDatabase>;
  let runs: ReturnType<typeof createRunRepository>;
  let jobs: ReturnType<typeof createJobRepository>;
  let events: ReturnType<typeof createEventRepository>;
  let reconciliation: ReturnType<typeof createReconciliationRepository>;
  let approvals: ReturnType<typeof createApprovalRepository>;

  const newRun = (overrides: Partial<NewRun> = {}): NewRun => {
    const id = randomUUID();
    return {
      id,
      agentName: 'bot',
      agentVersion: 1,
      sessionId: null,
      kind: 'Interactive',
      isStreaming: true,
      rootRunId: id,
      parentRunId: null,
      depth: 0,
      userId: null,
      labels: {},
      ...overrides,
    };
  };
  const enqueue = (lane = 'default') => jobs.enqueue('t1', newRun({ kind: 'Async' }), { payload: { n: 1 }, lane, maxAttempts: 1 });
  const target = (runId: string) => ({ runId, rootRunId: runId, tenantId: 't1', agentName: 'bot' });
  /** Ages a run's heartbeat, as if its process stopped beating that long ago. */
  const silence = (runId: string, seconds: number) =>
    db
      .updateTable('runs')
      .set({ heartbeat_at: sql`now() - ${`${seconds} seconds`}::interval` })
      .where('id', '=', runId)
      .execute();
  const expireLeases = () =>
    db
      .updateTable('jobs')
      .set({ lease_expires_at: sql`now() - interval '1 second'` })
      .where('status', '=', 'leased')
      .execute();
  const clearJobs = () => db.deleteFrom('jobs').execute();
  const setOutboxLease = (owner: string, expiresIn: string) =>
    db
      .updateTable('run_event_outbox_lease')
      .set({ owner, expires_at: sql`now() + ${expiresIn}::interval` })
      .execute();

  beforeAll(async () => {
    fixture = await openEngine(engine);
    db = (await fixture.storage.open<RunDatabase>('runs', runMigrations)).db;
    runs = createRunRepository(db, undefined, { outbox: true });
    jobs = createJobRepository(db);
    events = createEventRepository(db, { outbox: true });
    reconciliation = createReconciliationRepository(db, { outbox: true });
    approvals = createApprovalRepository(db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  describe('job leases', () => {
    it('enqueues a Queued run with its job, and leases each job to one worker only (SKIP LOCKED)', async () => {
      await clearJobs();
      const queued = await Promise.all([enqueue(), enqueue(), enqueue()]);
      expect(queued.map((run) => run.status)).toEqual(['Queued', 'Queued', 'Queued']);
      const [first, second] = await Promise.all([jobs.leaseJobs('worker-a', 2, 60_000), jobs.leaseJobs('worker-b', 2, 60_000)]);
      const leased = [...first, ...second].map((job) => job.runId);
      expect(leased.sort()).toEqual(queued.map((run) => run.id).sort());
      expect(new Set(leased).size).toBe(3);
      expect(await jobs.leaseJobs('worker-c', 5, 60_000)).toEqual([]);
      expect([...first, ...second].every((job) => job.attempts === 1)).toBe(true);
    });

    it('leases only the lanes asked for, and none with a limit of 0', async () => {
      await clearJobs();
      const fast = await enqueue('fast');
      await enqueue('slow');
      expect(await jobs.leaseJobs('worker-a', 0, 60_000)).toEqual([]);
      expect(await jobs.leaseJobs('worker-a', 5, 60_000, { only: [] })).toEqual([]);
      const leased = await jobs.leaseJobs('worker-a', 5, 60_000, { except: ['slow'] });
      expect(leased.map((job) => job.runId)).toEqual([fast.id]);
      expect((await jobs.leaseJobs('worker-a', 5, 60_000, { only: ['slow'] })).map((job) => job.lane)).toEqual(['slow']);
    });

    it('lets the next worker take over an expired lease; the old holder’s heartbeat then fails', async () => {
      await clearJobs();
      const run = await enqueue();
      const [job] = await jobs.leaseJobs('worker-a', 1, 60_000);
      expect(await jobs.heartbeat(job.id, 'worker-a', 60_000)).toBe(true);
      expect(await jobs.heartbeat(job.id, 'worker-b', 60_000)).toBe(false);
      expect(await jobs.leaseJobs('worker-b', 1, 60_000)).toEqual([]);
      await expireLeases();
      const [takenOver] = await jobs.leaseJobs('worker-b', 1, 60_000);
      expect(takenOver).toMatchObject({ runId: run.id, attempts: 2 });
      expect(await jobs.heartbeat(job.id, 'worker-a', 60_000)).toBe(false);
      await jobs.finishJob(job.id, 'done', null);
      await expireLeases();
      expect(await jobs.leaseJobs('worker-c', 1, 60_000)).toEqual([]);
    });

    it('lets tenants take turns: one tenant’s backlog never goes before another tenant’s first job', async () => {
      await clearJobs();
      const enqueueFor = (tenant: string) =>
        jobs.enqueue(tenant, newRun({ kind: 'Async' }), { payload: { n: 1 }, lane: 'default', maxAttempts: 1 });
      const backlog = [];
      for (let index = 0; index < 4; index++) backlog.push(await enqueueFor('tenant-a'));
      const late = await enqueueFor('tenant-b');
      // tenant-a holds one job already: tenant-b's only job comes first, then a's backlog in order.
      const [held] = await jobs.leaseJobs('worker-a', 1, 60_000);
      expect(held.runId).toBe(backlog[0].id);
      const next = await jobs.leaseJobs('worker-a', 1, 60_000);
      expect(next.map((job) => job.runId)).toEqual([late.id]);
      const rest = await jobs.leaseJobs('worker-a', 5, 60_000);
      expect(rest.map((job) => job.runId).sort()).toEqual(
        backlog
          .slice(1)
          .map((run) => run.id)
          .sort(),
      );
    });

    it('cancels a queued run only while no worker holds its job, with no error type', async () => {
      await clearJobs();
      const waiting = await enqueue();
      const canceled = await jobs.cancelQueued(waiting.id, { type: 'run.canceled', data: { usage: null } });
      expect(canceled?.run).toMatchObject({ status: 'Canceled', errorType: null, errorMessage: null });
      expect(canceled?.event).toMatchObject({ seq: 1, type: 'run.canceled' });
      expect((await events.events('t1', waiting.id, 0)).map((event) => event.type)).toEqual(['run.canceled']);
      const leased = await enqueue();
      await jobs.leaseJobs('worker-a', 1, 60_000);
      expect(await jobs.cancelQueued(leased.id, { type: 'run.canceled', data: {} })).toBeUndefined();
      expect(await events.events('t1', leased.id, 0)).toEqual([]);
    });
  });

  describe('run starts', () => {
    it('writes a run, its input and its first model in one statement', async () => {
      const input = { agentName: 'bot', messages: [{ role: 'user', content: 'hi' }] };
      const run = await runs.insert('t1', newRun(), 'Running', { input, model: { provider: 'mock', model: 'm1' } });
      expect(run).toMatchObject({ status: 'Running', modelProvider: 'mock', model: 'm1' });
      expect(await runs.getInput('t1', run.id)).toMatchObject({ input });
      const bare = await runs.insert('t1', newRun());
      expect(bare).toMatchObject({ modelProvider: null, model: null });
      expect(await runs.getInput('t1', bare.id)).toBeUndefined();
    });

    it('writes nothing when the row cannot be written: a second start of the same id keeps the first input', async () => {
      const first = await runs.insert('t1', newRun(), 'Running', { input: { n: 1 } });
      await expect(runs.insert('t1', newRun({ id: first.id, rootRunId: first.id }), 'Running', { input: { n: 2 } })).rejects.toThrow();
      expect(await runs.getInput('t1', first.id)).toMatchObject({ input: { n: 1 } });
    });
  });

  describe('run endings', () => {
    it('keeps the first ending: a second finish and a later markRunning change nothing', async () => {
      const run = await runs.insert('t1', newRun());
      const outcome = {
        usage: { inputTokens: 1, outputTokens: 2, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 3 },
        cost: null,
        prices: { input: null, output: null, cachedInput: null },
        errorType: null,
        errorMessage: null,
      };
      expect(await runs.finish(run.id, { ...outcome, status: 'Completed' })).toMatchObject({ status: 'Completed' });
      expect(await runs.finish(run.id, { ...outcome, status: 'Failed', errorType: 'worker_lost' })).toBeUndefined();
      expect(await runs.markRunning(run.id)).toBeUndefined();
      expect(await runs.get('t1', run.id)).toMatchObject({ status: 'Completed', errorType: null });
    });

    const outcome = {
      status: 'Completed' as const,
      usage: { inputTokens: 1, outputTokens: 2, cachedInputTokens: 0, reasoningTokens: 0, totalTokens: 3 },
      cost: null,
      prices: { input: null, output: null, cachedInput: null },
      errorType: null,
      errorMessage: null,
    };

    it('ends a run and stores its terminal event after its last one, with its outbox row, in one statement', async () => {
      await db.deleteFrom('run_event_outbox').execute();
      const run = await runs.insert('t1', newRun());
      await events.appendEvents(target(run.id), [{ seq: 1, type: 'run.started', data: {} }]);
      // Another tenant's ending of the run changes nothing.
      expect(await runs.finishWithEvent('t2', run.id, outcome, { type: 'run.completed', data: {} })).toBeUndefined();
      const ending = await runs.finishWithEvent('t1', run.id, outcome, { type: 'run.completed', data: { usage: 3 }, traceparent: 'tp' });
      expect(ending).toMatchObject({
        run: { id: run.id, status: 'Completed' },
        target: { runId: run.id, rootRunId: run.id, tenantId: 't1', agentName: 'bot', traceparent: 'tp' },
        event: { seq: 2, type: 'run.completed', data: { usage: 3 } },
      });
      const outbox = await db.selectFrom('run_event_outbox').select(['root_run_id', 'payload']).orderBy('id').execute();
      expect(outbox.map((row) => (row.payload as { type: string }).type)).toEqual(['run.started', 'run.completed']);
      // The terminal event's envelope names its run as the run's other events do.
      expect(outbox[1]).toMatchObject({
        root_run_id: run.id,
        payload: { tenantId: 't1', runId: run.id, rootRunId: run.id, agentName: 'bot', seq: 2, data: { usage: 3 }, traceparent: 'tp' },
      });
      // The first ending stands: no second terminal event.
      expect(await runs.finishWithEvent('t1', run.id, { ...outcome, status: 'Failed' }, { type: 'run.failed', data: {} })).toBeUndefined();
      expect((await events.events('t1', run.id, 0)).map((event) => event.type)).toEqual(['run.started', 'run.completed']);
    });

    it('leaves the run unended when its terminal event cannot be stored', async () => {
      const run = await runs.insert('t1', newRun());
      // JSON cannot hold a bigint: the ending is refused whole.
      await expect(runs.finishWithEvent('t1', run.id, outcome, { type: 'run.completed', data: { usage: 3n } })).rejects.toThrow();
      // The store refuses the event inside the statement: the row's update is undone with it.
      await db.schema
        .alterTable('run_events')
        .addCheckConstraint('refuse_for_test', sql`type <> 'run.refused'`)
        .execute();
      try {
        await expect(runs.finishWithEvent('t1', run.id, outcome, { type: 'run.refused', data: {} })).rejects.toThrow();
      } finally {
        await db.schema.alterTable('run_events').dropConstraint('refuse_for_test').execute();
      }
      expect(await runs.get('t1', run.id)).toMatchObject({ status: 'Running', completedAt: null });
      expect(await events.events('t1', run.id, 0)).toEqual([]);
    });

    it('ends a run after an event stored while it waited for the run’s row', async () => {
      const run = await runs.insert('t1', newRun());
      await events.appendEvents(target(run.id), [{ seq: 1, type: 'run.started', data: {} }]);
      let ending: Promise<unknown> | undefined;
      await db.transaction().execute(async (trx) => {
        // An orphan scan's restart: the row locked, an event stored under the lock.
        await trx.selectFrom('runs').select('id').where('id', '=', run.id).forUpdate().execute();
        await trx
          .insertInto('run_events')
          .values({ run_id: run.id, seq: 2, type: 'run.continued', data: jsonb({}) })
          .execute();
        ending = runs.finishWithEvent('t1', run.id, outcome, { type: 'run.completed', data: {} });
        await new Promise((resolve) => setTimeout(resolve, 200));
      });
      expect(await ending).toMatchObject({ run: { status: 'Completed' }, event: { seq: 3, type: 'run.completed' } });
      expect((await events.events('t1', run.id, 0)).map((event) => event.seq)).toEqual([1, 2, 3]);
    });

    it('seals a run’s terminal event for the run’s tenant when content protection is on', async () => {
      const cipher = sealingCipher();
      const sealedRuns = createRunRepository(db, cipher, { outbox: true });
      const run = await sealedRuns.insert('t1', newRun());
      const ending = await sealedRuns.finishWithEvent('t1', run.id, outcome, { type: 'run.completed', data: { canary: 'c-91f' } });
      expect(ending?.event.data).toEqual({ canary: 'c-91f' });
      const stored = await db.selectFrom('run_events').select('data').where('run_id', '=', run.id).executeTakeFirstOrThrow();
      expect(JSON.stringify(stored.data)).not.toContain('c-91f');
      expect(await createEventRepository(db, { outbox: true, cipher }).events('t1', run.id, 0)).toMatchObject([
        { type: 'run.completed', data: { canary: 'c-91f' } },
      ]);
    });
  });

  it('tells where every followed run stands in one statement: its last seq and whether it ended', async () => {
    const quiet = await runs.insert('t1', newRun());
    const talking = await runs.insert('t2', newRun());
    await events.appendEvents(target(talking.id), [
      { seq: 1, type: 'run.started', data: {} },
      { seq: 2, type: 'message.delta', data: {} },
    ]);
    await runs.setStatus(talking.id, 'Canceled');
    const gone = randomUUID();
    const standing = await events.followedRuns([quiet.id, talking.id, gone]);
    expect(Object.fromEntries(standing)).toEqual({
      [quiet.id]: { lastSeq: 0, ended: false },
      [talking.id]: { lastSeq: 2, ended: true },
    });
    expect(await events.followedRuns([])).toEqual(new Map());
  });

  describe('orphan claims', () => {
    it('closes a silent interactive run as Failed/orphaned after its last event, and leaves live and queued runs alone', async () => {
      const orphan = await runs.insert('t1', newRun());
      const live = await runs.insert('t1', newRun());
      const queued = await enqueue();
      await events.appendEvents(target(orphan.id), [{ seq: 1, type: 'run.started', data: {} }]);
      await approvals.requestApprovals(orphan.id, [{ id: randomUUID(), toolCallId: 'c1', toolName: 'clock', args: {} }], 60_000);
      await silence(orphan.id, 60);
      await silence(queued.id, 60);
      const claimed = await reconciliation.claimOrphans(10_000, 100, 0);
      expect(claimed.failed).toContain(orphan.id);
      expect(claimed.failed).not.toContain(live.id);
      expect(claimed.failed).not.toContain(queued.id);
      expect(await runs.get('t1', orphan.id)).toMatchObject({ status: 'Failed', errorType: 'orphaned' });
      expect((await events.events('t1', orphan.id, 0)).map((event) => [event.seq, event.type])).toEqual([
        [1, 'run.started'],
        [2, 'run.failed'],
      ]);
      expect((await approvals.approvals(orphan.id)).map((approval) => approval.status)).toEqual(['Expired']);
      expect((await reconciliation.claimOrphans(10_000, 100, 0)).failed).not.toContain(orphan.id);
    });

    it('hands a run with a continuation back to be restarted while attempts remain, then closes it', async () => {
      const run = await runs.insert('t1', newRun());
      await reconciliation.saveContinuation(run.id, { request: 'again' });
      await silence(run.id, 60);
      const first = await reconciliation.claimOrphans(10_000, 100, 1);
      expect(first.continued).toContainEqual({ runId: run.id, payload: { request: 'again' }, attempt: 1 });
      expect((await events.events('t1', run.id, 0)).map((event) => event.type)).toEqual(['run.continued']);
      expect((await runs.get('t1', run.id))!.status).toBe('Running');
      await silence(run.id, 60);
      const second = await reconciliation.claimOrphans(10_000, 100, 1);
      expect(second.failed).toContain(run.id);
    });
  });

  describe('the outbox', () => {
    const drain = () => db.deleteFrom('run_event_outbox').execute();

    it('ships stored events in order, outside any transaction, and deletes what it shipped', async () => {
      await drain();
      const run = await runs.insert('t1', newRun());
      await events.appendEvents(target(run.id), [
        { seq: 1, type: 'run.started', data: {} },
        { seq: 2, type: 'message.delta', data: { text: 'hi' } },
      ]);
      const shipped: Array<{ key: string; value: string }> = [];
      const count = await events.shipOutbox({ owner: 'relay-a', limit: 10, leaseMs: 30_000 }, async (records) => {
        // Another write while the relay waits on the event log: a transaction held open here would block it.
        await events.appendEvents(target(run.id), [{ seq: 3, type: 'run.completed', data: {} }]);
        shipped.push(...records);
      });
      expect(count).toBe(2);
      expect(shipped.map((record) => [record.key, JSON.parse(record.value).seq, JSON.parse(record.value).type])).toEqual([
        [run.id, 1, 'run.started'],
        [run.id, 2, 'message.delta'],
      ]);
      expect(JSON.parse(shipped[0].value)).toMatchObject({ tenantId: 't1', runId: run.id, rootRunId: run.id, agentName: 'bot' });
      // The round released the lease with its delete: another relay ships the rest at once.
      const rest: string[] = [];
      await events.shipOutbox(
        { owner: 'relay-b', limit: 10, leaseMs: 30_000 },
        async (records) => void rest.push(...records.map((r) => JSON.parse(r.value).type)),
      );
      expect(rest).toEqual(['run.completed']);
      // An empty outbox is read without taking the lease.
      expect(await events.shipOutbox({ owner: 'relay-c', limit: 10, leaseMs: 30_000 }, async () => {})).toBe(0);
      const lease = await db.selectFrom('run_event_outbox_lease').select(['owner', 'expires_at']).executeTakeFirstOrThrow();
      expect(lease).toEqual({ owner: null, expires_at: null });
    });

    it('writes no outbox rows for an in-process event log', async () => {
      await drain();
      const direct = createEventRepository(db, { outbox: false });
      const run = await runs.insert('t1', newRun());
      const stored = await direct.appendEvents(target(run.id), [{ seq: 1, type: 'run.started', data: { a: 1 } }]);
      expect(stored).toMatchObject([{ seq: 1, runId: run.id, type: 'run.started', data: { a: 1 } }]);
      expect(await db.selectFrom('run_event_outbox').selectAll().execute()).toEqual([]);
    });

    it('keeps events whose shipment failed, and lets one relay ship at a time until its lease expires', async () => {
      await drain();
      const run = await runs.insert('t1', newRun());
      await events.appendEvents(target(run.id), [{ seq: 1, type: 'run.started', data: {} }]);
      await expect(
        events.shipOutbox({ owner: 'relay-a', limit: 10, leaseMs: 30_000 }, async () => {
          throw new Error('broker down');
        }),
      ).rejects.toThrow('broker down');
      let inside: () => void = () => {};
      let release: () => void = () => {};
      const holding = events.shipOutbox({ owner: 'relay-a', limit: 10, leaseMs: 30_000 }, async () => {
        inside();
        await new Promise<void>((resolve) => (release = resolve));
      });
      await new Promise<void>((resolve) => (inside = resolve));
      expect(await events.shipOutbox({ owner: 'relay-b', limit: 10, leaseMs: 30_000 }, async () => {})).toBe(0);
      release();
      expect(await holding).toBe(1);

      await events.appendEvents(target(run.id), [{ seq: 2, type: 'run.completed', data: {} }]);
      // A relay that died holding the lease: the next one waits for it to expire.
      await setOutboxLease('relay-dead', '1 hour');
      expect(await events.shipOutbox({ owner: 'relay-b', limit: 10, leaseMs: 30_000 }, async () => {})).toBe(0);
      await setOutboxLease('relay-dead', '-1 second');
      expect(await events.shipOutbox({ owner: 'relay-b', limit: 10, leaseMs: 30_000 }, async () => {})).toBe(1);
    });
  });

  it('seals a score’s comment when content protection is on, and reads it back for the run’s tenant', async () => {
    const cipher = sealingCipher();
    const scores = createScoreRepository(db, cipher);
    const run = await runs.insert('t1', newRun());
    const score = { id: randomUUID(), runId: run.id, messageId: null, name: 'overall', kind: 'Numeric', value: 1, textValue: null };
    const saved = await scores.saveScore('t1', { ...score, source: 'Human', author: 'alice', comment: 'canary-3b2' });
    expect(saved.score.comment).toBe('canary-3b2');
    const stored = await db.selectFrom('run_scores').select('comment').where('run_id', '=', run.id).executeTakeFirstOrThrow();
    expect(stored.comment).toMatch(/^hgc1\.k1\./);
    expect((await scores.scores('t1', run.id)).map((each) => each.comment)).toEqual(['canary-3b2']);
    expect((await scores.deleteScore('t1', run.id, saved.score.id))?.comment).toBe('canary-3b2');
  });

  it('seals a tool call’s arguments awaiting approval, and opens them on every read, decided or expired', async () => {
    const cipher = sealingCipher();
    const sealed = createApprovalRepository(db, cipher);
    const run = await runs.insert('t1', newRun(), 'Running');
    const calls = [1, 2].map((n) => ({ id: randomUUID(), toolCallId: `c${n}`, toolName: 'clock', args: { secret: `canary-${n}` } }));
    const argsOf = (approvals: Array<{ toolCallId: string; args: unknown }>) =>
      [...approvals].sort((a, b) => a.toolCallId.localeCompare(b.toolCallId)).map((approval) => approval.args);
    expect(argsOf(await sealed.requestApprovals(run.id, calls, 60_000))).toEqual([{ secret: 'canary-1' }, { secret: 'canary-2' }]);
    const stored = await db.selectFrom('run_approvals').select('args').where('run_id', '=', run.id).execute();
    expect(JSON.stringify(stored)).not.toContain('canary');
    expect(argsOf(await sealed.approvals(run.id))).toEqual([{ secret: 'canary-1' }, { secret: 'canary-2' }]);
    expect((await sealed.decideApproval(run.id, calls[0].id, { approved: true, decidedBy: 'alice', comment: null }))?.args).toEqual({
      secret: 'canary-1',
    });
    await db
      .updateTable('run_approvals')
      .set({ expires_at: sql`now() - interval '1 second'` })
      .where('id', '=', calls[1].id)
      .execute();
    expect((await sealed.expireApprovals(10)).find((approval) => approval.id === calls[1].id)?.args).toEqual({ secret: 'canary-2' });
  });

  it('keeps a run’s spans in start order, once, sealed, and shows them to their tenant only', async () => {
    const spans = createSpanRepository(db, sealingCipher());
    const runId = randomUUID();
    const span = (spanId: string, start: number, parentSpanId: string | null) => ({
      spanId,
      traceId: 'a'.repeat(32),
      parentSpanId,
      name: `span ${spanId}`,
      startTime: new Date(Date.UTC(2026, 10, 25, 12, 0, start)).toISOString(),
      endTime: new Date(Date.UTC(2026, 10, 25, 12, 0, start + 1)).toISOString(),
      status: 'Ok' as const,
      attributes: { 'gen_ai.request.model': 'm', prompt: 'canary-span' },
    });
    await spans.insert('t1', runId, [span('b', 2, 'a'), span('a', 1, null)]);
    await spans.insert('t1', runId, [span('a', 1, null)]);
    expect((await spans.list('t1', runId)).map((each) => [each.spanId, each.parentSpanId, each.attributes.prompt])).toEqual([
      ['a', null, 'canary-span'],
      ['b', 'a', 'canary-span'],
    ]);
    expect(JSON.stringify(await db.selectFrom('run_spans').select('attributes').where('run_id', '=', runId).execute())).not.toContain(
      'canary',
    );
    expect(await spans.list('t2', runId)).toEqual([]);
  });
});
