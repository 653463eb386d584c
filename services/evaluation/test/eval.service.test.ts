import { HangarError, notFound } from '@hangar/platform';
import { strictFake } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import type { AgentVersions } from '../src/clients/ports.js';
import type { SuiteRecord } from '../src/suites/eval.model.js';
import type { EvaluationRepository } from '../src/suites/eval.repository.js';
import { createEvaluationService, MAX_CASES } from '../src/suites/eval.service.js';

const caller = { tenantId: 'acme', actor: 'tester' };
const suite: SuiteRecord = {
  name: 'judged',
  description: '',
  version: 4,
  cases: [
    {
      id: 'a',
      input: 'hi',
      parameters: {},
      graders: [
        { kind: 'judge', agent: 'judge' },
        { kind: 'judge', agent: 'critic' },
      ],
    },
  ],
  createdAt: new Date(),
  updatedAt: new Date(),
};

const unexpected = (name: string) => () => {
  throw new Error(`unexpected call of ${name}`);
};

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(HangarError);
  return error as HangarError;
};

describe('evaluation service', () => {
  it('settles ids and the default grader, and refuses a suite with every reason before storing it', async () => {
    let stored: unknown;
    const service = createEvaluationService({
      repository: strictFake<EvaluationRepository>('repository', {
        async putSuite(_tenant, _name, _description, cases) {
          stored = cases;
          return { suite: { ...suite, cases }, created: true };
        },
      }),
      agents: strictFake<AgentVersions>('agents', {}),
      wake: () => {},
      stopCanceled: unexpected('stopCanceled'),
    });
    await service.putSuite(caller, 'ok', { description: '', cases: [{ input: 'hi', parameters: {}, expected: 'hello', graders: [] }] });
    expect(stored).toEqual([{ id: 'case-1', input: 'hi', parameters: {}, expected: 'hello', graders: [{ kind: 'exact' }] }]);
    const tooMany = Array.from({ length: MAX_CASES + 1 }, () => ({ input: 'x', parameters: {}, expected: 'x', graders: [] }));
    const refused = await refusal(service.putSuite(caller, 'online', { description: 'x'.repeat(2001), cases: tooMany }));
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.extensions)).toContain('reserved');
    expect(JSON.stringify(refused.extensions)).toContain('at most 1000 cases');
    expect(JSON.stringify(refused.extensions)).toContain('over 2000 characters');
  });

  it('pins the agent version and checks every judge agent before queueing; a missing judge is 400, an unknown agent 404', async () => {
    const created: unknown[] = [];
    let woken = 0;
    const known = new Set(['student', 'judge']);
    const service = createEvaluationService({
      repository: strictFake<EvaluationRepository>('repository', {
        getSuite: async () => suite,
        async createRun(input) {
          created.push(input);
          return { id: input.id } as never;
        },
      }),
      agents: strictFake<AgentVersions>('agents', {
        async pin(_caller, name, version) {
          if (!known.has(name)) throw notFound(`agent "${name}" not found`);
          return version ?? 7;
        },
      }),
      wake: () => woken++,
      stopCanceled: unexpected('stopCanceled'),
    });
    const missingJudge = await refusal(service.startRun(caller, 'judged', 'student'));
    expect(missingJudge.status).toBe(400);
    expect(JSON.stringify(missingJudge.extensions)).toContain('agent \\"critic\\" not found');
    expect((await refusal(service.startRun(caller, 'judged', 'nobody'))).status).toBe(404);
    expect(created).toEqual([]);
    known.add('critic');
    await service.startRun(caller, 'judged', 'student');
    expect(created).toEqual([expect.objectContaining({ tenantId: 'acme', agentName: 'student', agentVersion: 7, suite, caller })]);
    expect(woken).toBe(1);
  });

  it('cancels a running suite run, stopping its cases here; answers a canceled one again, and refuses an ended or unknown one', async () => {
    const statuses = new Map<string, string[]>([
      // One read per cancel, after it.
      ['running', ['Canceled', 'Canceled']],
      ['done', ['Completed']],
    ]);
    const canceled: string[] = [];
    const stopped: string[] = [];
    const service = createEvaluationService({
      repository: strictFake<EvaluationRepository>('repository', {
        async getRun(tenantId, id) {
          expect(tenantId).toBe('acme');
          const status = statuses.get(id)?.shift();
          return status ? ({ run: { id, status }, results: [] } as never) : undefined;
        },
        async cancelRun(tenantId, id) {
          expect(tenantId).toBe('acme');
          canceled.push(id);
          return id === 'running' && canceled.filter((each) => each === id).length === 1;
        },
      }),
      agents: strictFake<AgentVersions>('agents', {}),
      wake: unexpected('wake'),
      stopCanceled: (id) => stopped.push(id),
    });
    expect(await service.cancelRun(caller, 'running')).toMatchObject({ status: 'Canceled' });
    expect(stopped).toEqual(['running']);
    // Again: nothing left to cancel or stop, the run as it is.
    expect(await service.cancelRun(caller, 'running')).toMatchObject({ status: 'Canceled' });
    expect(stopped).toEqual(['running']);
    const ended = await refusal(service.cancelRun(caller, 'done'));
    expect([ended.status, ended.message]).toEqual([409, 'eval run "done" already ended Completed']);
    expect((await refusal(service.cancelRun(caller, 'nobody'))).status).toBe(404);
    expect(canceled).toEqual(['running', 'running', 'done', 'nobody']);
    expect([...statuses.values()]).toEqual([[], []]);
  });
});
