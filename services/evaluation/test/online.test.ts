import { randomUUID } from 'node:crypto';
import type { Logger } from '@hangar/platform';
import type { Kysely } from '@hangar/storage';
import { openEngine, SQL_ENGINES, strictFake, type EngineFixture } from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseRunner, JudgedRun, RunRecords } from '../src/clients/ports.js';
import type { EvaluationDatabase } from '../src/database.js';
import { EVALUATION_SCHEMA, evaluationMigrations } from '../src/migrations/index.js';
import { createOnlineEvaluator, sampled, type OnlineEvaluationSettings } from '../src/online/online-evaluator.js';
import { createOnlineRepository, type OnlineRepository } from '../src/online/online.repository.js';

const SETTINGS: OnlineEvaluationSettings = {
  enabled: true,
  sampleRate: 1,
  maxScoresPerHour: 100,
  agentNames: [],
  judgeAgent: 'judge',
  judgeTimeoutMs: 1_000,
  windowMs: 3_600_000,
  lowScoreThreshold: 60,
  minSampleSize: 2,
};
const logger = strictFake<Logger>('logger', { warn: () => {} });
const completed = (runId: string = randomUUID(), agentName = 'assistant') => ({
  type: 'run.completed',
  tenantId: 'acme',
  runId,
  agentName,
});

describe('online evaluation sampling', () => {
  it('gives every run the same answer for a rate, and about the rate’s share of runs', () => {
    const ids = Array.from({ length: 4000 }, () => randomUUID());
    const share = ids.filter((id) => sampled(id, 0.25)).length / ids.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.3);
    expect(ids.filter((id) => sampled(id, 0.25))).toEqual(ids.filter((id) => sampled(id, 0.25)));
    expect(ids.every((id) => sampled(id, 1) && !sampled(id, 0))).toBe(true);
  });
});

describe('online evaluator, with strict fakes', () => {
  const judgedRun: JudgedRun = { kind: 'Interactive', status: 'Completed', agentVersion: 4, input: 'What is 2 + 2?', output: '4' };

  function evaluator(
    options: { run?: JudgedRun; judgeReply?: string; settings?: Partial<OnlineEvaluationSettings>; budget?: boolean } = {},
  ) {
    const calls = {
      claimed: [] as string[],
      released: [] as string[],
      scored: [] as unknown[],
      recorded: [] as unknown[],
      judged: [] as string[],
    };
    const repository = strictFake<OnlineRepository>('repository', {
      async claim(run) {
        calls.claimed.push(run.runId);
        return true;
      },
      reserve: async () => options.budget ?? true,
      async release(runId) {
        calls.released.push(runId);
      },
      async record(runId, score) {
        calls.recorded.push({ runId, ...score });
      },
    });
    const runner = strictFake<CaseRunner>('runner', {
      async run(caller, request) {
        expect(caller).toEqual({ tenantId: 'acme', actor: 'online-evaluation' });
        calls.judged.push(request.input);
        return {
          runId: 'judge-run',
          completed: true,
          output: options.judgeReply ?? '{"score": 80, "reason": "right"}',
          inputTokens: 1,
          outputTokens: 1,
          cost: null,
          latencyMs: 1,
        };
      },
    });
    const records = strictFake<RunRecords>('records', {
      read: async () => options.run ?? judgedRun,
      async score(_caller, runId, score) {
        calls.scored.push({ runId, ...score });
      },
    });
    return {
      online: createOnlineEvaluator({ repository, runner, records, logger, settings: { ...SETTINGS, ...options.settings } }),
      calls,
    };
  }

  it('judges a completed run with its input and answer, saves the score on the run and records it', async () => {
    const { online, calls } = evaluator();
    await online.heard(completed('r1'));
    expect(calls.judged[0]).toContain('Input: What is 2 + 2?');
    expect(calls.judged[0]).toContain('Answer: 4');
    expect(calls.scored).toEqual([{ runId: 'r1', name: 'online', value: 80, comment: 'right' }]);
    expect(calls.recorded).toEqual([{ runId: 'r1', score: 80, reason: 'right', judgeRunId: 'judge-run' }]);
  });

  it('ignores other events, agents outside AgentNames, Evaluation runs, and does nothing without a judge', async () => {
    const listed = evaluator({ settings: { agentNames: ['other'] } });
    await listed.online.heard(completed());
    await listed.online.heard({ ...completed(), type: 'run.failed', agentName: 'other' });
    expect(listed.calls.claimed).toEqual([]);
    const evaluation = evaluator({ run: { ...judgedRun, kind: 'Evaluation' } });
    await evaluation.online.heard(completed());
    expect(evaluation.calls.claimed).toEqual([]);
    const unjudged = evaluator({ settings: { judgeAgent: null } });
    expect(unjudged.online.active).toBe(false);
    await unjudged.online.heard(completed());
    expect(unjudged.calls.claimed).toEqual([]);
  });

  it('gives the claim up when the hour’s budget is spent or the judge gives no score', async () => {
    const spent = evaluator({ budget: false });
    await spent.online.heard(completed('r2'));
    expect(spent.calls).toMatchObject({ released: ['r2'], judged: [], scored: [] });
    const mute = evaluator({ judgeReply: 'no comment' });
    await mute.online.heard(completed('r3'));
    expect(mute.calls).toMatchObject({ released: ['r3'], scored: [], recorded: [] });
  });
});

describe.each(SQL_ENGINES)('online evaluation repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<EvaluationDatabase>;
  let repository: OnlineRepository;

  beforeAll(async () => {
    fixture = await openEngine(engine);
    ({ db } = await fixture.storage.open<EvaluationDatabase>(EVALUATION_SCHEMA, evaluationMigrations));
    repository = createOnlineRepository(db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('claims a run once, and frees an unscored claim only', async () => {
    const run = { runId: randomUUID(), tenantId: 'acme', agentName: 'assistant', agentVersion: 1 };
    expect(await repository.claim(run)).toBe(true);
    expect(await repository.claim(run)).toBe(false);
    await repository.release(run.runId);
    expect(await repository.claim(run)).toBe(true);
    await repository.record(run.runId, { score: 70, reason: 'fine', judgeRunId: null });
    await repository.release(run.runId);
    expect(await repository.claim(run)).toBe(false);
  });

  it('reserves at most the hour’s budget per tenant, even when asked at once', async () => {
    const tenant = `t-${randomUUID()}`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => repository.reserve(tenant, 5)));
    expect(answers.filter(Boolean)).toHaveLength(5);
    expect(await repository.reserve(`${tenant}-other`, 5)).toBe(true);
  });

  it('summarises each agent’s scores in the window', async () => {
    const tenant = `t-${randomUUID()}`;
    for (const [agentName, score] of [
      ['a', 40],
      ['a', 60],
      ['b', 90],
    ] as const) {
      const runId = randomUUID();
      await repository.claim({ runId, tenantId: tenant, agentName, agentVersion: null });
      await repository.record(runId, { score, reason: '', judgeRunId: null });
    }
    const unscored = randomUUID();
    await repository.claim({ runId: unscored, tenantId: tenant, agentName: 'a', agentVersion: null });
    const summary = await repository.summary(tenant, new Date(Date.now() - 60_000));
    expect(summary).toEqual([
      expect.objectContaining({ agentName: 'a', samples: 2, meanScore: 50, minScore: 40 }),
      expect.objectContaining({ agentName: 'b', samples: 1, meanScore: 90, minScore: 90 }),
    ]);
    expect(await repository.summary(tenant, new Date(Date.now() + 60_000))).toEqual([]);
  });
});
