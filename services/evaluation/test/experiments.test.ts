import type { Logger } from '@hangar/platform';
import type { Kysely } from '@hangar/storage';
import { openEngine, SQL_ENGINES, strictFake, type EngineFixture } from '@hangar/testing';
import { chooseVariant } from '@hangar/contracts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExperimentPorts } from '../src/clients/ports.js';
import type { EvaluationDatabase } from '../src/database.js';
import { createCanaryScanner, type CanarySettings } from '../src/experiments/canary-scanner.js';
import {
  createExperimentRepository,
  type ExperimentRecord,
  type ExperimentRepository,
  type Variant,
} from '../src/experiments/experiment.repository.js';
import { EVALUATION_SCHEMA, evaluationMigrations } from '../src/migrations/index.js';
import type { OnlineRepository } from '../src/online/online.repository.js';

const SETTINGS: CanarySettings = { intervalMs: 1_000, autoRollback: true, lowScoreThreshold: 60, minSampleSize: 3, windowMs: 3_600_000 };
const logger = strictFake<Logger>('logger', { warn: () => {} });

const canary = (weight: number): ExperimentRecord => ({
  tenantId: 'acme',
  name: 'rollout',
  agentName: 'assistant',
  variants: [
    { version: 1, weight: 100 - weight },
    { version: 2, weight },
  ],
  canary: { baselineVersion: 1, canaryVersion: 2, initialPercent: 10, stepPercent: 30 },
  status: 'Running',
  reason: null,
  createdAt: new Date(),
  updatedAt: new Date(),
  startedAt: new Date(Date.now() - 60_000),
  stoppedAt: null,
});

describe('variant choice', () => {
  it('splits by weight, the same way for the same key, and never picks a zero weight', () => {
    const variants = [
      { version: 1, weight: 3 },
      { version: 2, weight: 1 },
      { version: 3, weight: 0 },
    ];
    const picks = Array.from({ length: 4000 }, () => chooseVariant(variants, randomUUID()));
    const share = picks.filter((version) => version === 1).length / picks.length;
    expect(share).toBeGreaterThan(0.7);
    expect(share).toBeLessThan(0.8);
    expect(picks).not.toContain(3);
    expect(chooseVariant(variants, 'session-1')).toBe(chooseVariant(variants, 'session-1'));
    expect(chooseVariant([{ version: 1, weight: 0 }], 'x')).toBeUndefined();
  });
});

describe('canary scanner, with strict fakes', () => {
  function scanner(
    experiment: ExperimentRecord,
    score: { samples: number; meanScore: number } | undefined,
    settings: Partial<CanarySettings> = {},
  ) {
    const calls: string[] = [];
    let variants: Variant[] | undefined;
    const repository = strictFake<ExperimentRepository>('repository', {
      claimCanaries: async () => [experiment],
      async setVariants(_tenant, _name, next) {
        variants = next;
        calls.push(`variants ${next.map((variant) => variant.weight).join('/')}`);
      },
      async end(_tenant, _name, status, reason) {
        calls.push(`end ${status}: ${reason}`);
        return { ...experiment, status, reason };
      },
    });
    const online = strictFake<OnlineRepository>('online', {
      byVersion: async () => new Map(score ? [[2, score]] : []),
    });
    const ports = strictFake<ExperimentPorts>('ports', {
      async rollback(_caller, agentName, version) {
        calls.push(`rollback ${agentName} to ${version}`);
        return 3;
      },
      async audit(_caller, entry) {
        calls.push(`audit ${entry.action}`);
      },
      async webhook(_caller, event) {
        calls.push(`webhook ${event.type}`);
      },
      async announce() {
        calls.push('announce');
      },
    });
    const scan = createCanaryScanner({ repository, online, ports, logger, settings: { ...SETTINGS, ...settings } }).scan;
    return { scan, calls, variants: () => variants };
  }

  it('rolls a canary that scores low back to its baseline first, then ends it, announces, audits and offers the webhook', async () => {
    const { scan, calls } = scanner(canary(10), { samples: 3, meanScore: 20 });
    await scan();
    expect(calls).toEqual([
      'rollback assistant to 1',
      'end RolledBack: canary version 2 scored 20.0 on average over 3 runs, below OnlineEvaluation:LowScoreThreshold 60',
      'announce',
      'audit canary.rolled-back',
      'webhook canary.rolled-back',
    ]);
  });

  it('leaves a low canary running when auto rollback is off, and waits for MinSampleSize scored runs', async () => {
    const off = scanner(canary(10), { samples: 5, meanScore: 20 }, { autoRollback: false });
    await off.scan();
    expect(off.calls).toEqual([]);
    const few = scanner(canary(10), { samples: 2, meanScore: 10 });
    await few.scan();
    expect(few.calls).toEqual([]);
  });

  it('gives a canary whose score holds its step more, and completes it at 100 %', async () => {
    const growing = scanner(canary(10), { samples: 3, meanScore: 80 });
    await growing.scan();
    expect(growing.calls).toEqual(['variants 60/40', 'announce']);
    const done = scanner(canary(90), { samples: 3, meanScore: 80 });
    await done.scan();
    expect(done.calls).toEqual(['variants 0/100', 'end Completed: canary version 2 takes every run', 'announce']);
  });
});

describe.each(SQL_ENGINES)('experiment repository on %s', (engine) => {
  let fixture: EngineFixture;
  let db: Kysely<EvaluationDatabase>;
  let repository: ExperimentRepository;
  const variants = [
    { version: 1, weight: 1 },
    { version: 2, weight: 1 },
  ];

  beforeAll(async () => {
    fixture = await openEngine(engine);
    ({ db } = await fixture.storage.open<EvaluationDatabase>(EVALUATION_SCHEMA, evaluationMigrations));
    repository = createExperimentRepository(db);
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('creates a draft, replaces it, and lets one experiment of an agent run at a time', async () => {
    const tenant = `t-${randomUUID()}`;
    expect(await repository.put(tenant, { name: 'a', agentName: 'bot', variants, canary: null })).toMatchObject({
      created: true,
      experiment: { status: 'Draft' },
    });
    expect(await repository.put(tenant, { name: 'a', agentName: 'bot', variants, canary: null })).toMatchObject({ created: false });
    await repository.put(tenant, { name: 'b', agentName: 'bot', variants, canary: null });
    expect(await repository.start(tenant, 'a')).toMatchObject({ status: 'Running' });
    expect(await repository.start(tenant, 'b')).toBe('conflict');
    expect(await repository.running(tenant, 'bot')).toMatchObject({ name: 'a' });
    expect(await repository.end(tenant, 'a', 'Stopped', 'by hand')).toMatchObject({ status: 'Stopped', reason: 'by hand' });
    expect(await repository.end(tenant, 'a', 'Stopped', 'again')).toBeUndefined();
    expect(await repository.start(tenant, 'b')).toMatchObject({ status: 'Running' });
    expect(await repository.running(`${tenant}-other`, 'bot')).toBeUndefined();
  });

  it('hands each running canary to one scan per interval', async () => {
    const tenant = `t-${randomUUID()}`;
    const policy = { baselineVersion: 1, canaryVersion: 2, initialPercent: 10, stepPercent: 10 };
    await repository.put(tenant, { name: 'c', agentName: 'bot', variants, canary: policy });
    await repository.start(tenant, 'c');
    const mine = (claimed: ExperimentRecord[]) => claimed.filter((experiment) => experiment.tenantId === tenant);
    expect(mine(await repository.claimCanaries(60_000))).toEqual([]); // started just now: scanned at its start
    expect(mine(await repository.claimCanaries(0))).toHaveLength(1);
    expect(mine(await repository.claimCanaries(60_000))).toEqual([]);
    await repository.setVariants(tenant, 'c', [
      { version: 1, weight: 70 },
      { version: 2, weight: 30 },
    ]);
    expect((await repository.get(tenant, 'c'))?.variants).toEqual([
      { version: 1, weight: 70 },
      { version: 2, weight: 30 },
    ]);
  });
});
