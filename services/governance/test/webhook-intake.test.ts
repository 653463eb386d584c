import { AGENT_CHANGES_TOPIC, RUN_EVENTS_TOPIC } from '@hangar/contracts';
import { createInProcessEventLog } from '@hangar/messaging';
import { createLogger, notFound, PLAIN_CONTENT } from '@hangar/platform';
import { eventually } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import { startWebhookIntake } from '../src/webhooks/webhook-intake.js';
import type { WebhookEvent } from '../src/webhooks/webhook.service.js';

/** What the intake makes of the event log: which records become webhook events, with which ids and data. */

const envelope = (runId: string, seq: number, type: string, data: Record<string, unknown> = {}) => ({
  key: runId,
  value: JSON.stringify({ tenantId: 't1', runId, rootRunId: runId, agentName: 'bot', seq, type, at: '2026-11-25T10:00:00Z', data }),
});

describe('webhook intake', () => {
  it('offers run outcomes with the run record, approval requests and agent changes; skips what it cannot use', async () => {
    const log = createInProcessEventLog();
    const offered: Array<Omit<WebhookEvent, 'data'> & { data: unknown }> = [];
    const intake = await startWebhookIntake({
      eventLog: log,
      offer: async (event) => {
        offered.push({ ...event, data: await event.data() });
        return 1;
      },
      runRecord: async (_tenant, runId) => {
        if (runId === 'gone') throw notFound(`run ${runId} not found`);
        return { id: runId, status: 'Completed' };
      },
      cipher: PLAIN_CONTENT,
      logger: createLogger({ name: 'test', level: 'silent' }),
    });
    await log.append(RUN_EVENTS_TOPIC, [
      { key: 'x', value: 'not json' },
      envelope('gone', 9, 'run.completed'),
      envelope('r1', 1, 'run.started'),
      envelope('r1', 2, 'approval.requested', { approvalId: 'a1', toolName: 'clock', args: { secret: 1 } }),
      envelope('r1', 3, 'run.completed'),
    ]);
    await log.append(AGENT_CHANGES_TOPIC, [
      {
        key: 't1/bot',
        value: JSON.stringify({
          id: '6f1c1d1e-5b7a-4c36-9a51-2f4ad3b1f0aa',
          tenantId: 't1',
          type: 'agent.updated',
          name: 'bot',
          version: 3,
          at: '2026-11-25T10:00:01Z',
        }),
      },
    ]);
    await eventually(() => (offered.length === 3 ? true : undefined), 'three offers');
    const byType = Object.fromEntries(offered.map((event) => [event.type, event]));
    expect(byType['approval.requested'].data).toEqual({ runId: 'r1', approvalId: 'a1', toolName: 'clock' });
    expect(byType['run.completed']).toMatchObject({
      tenantId: 't1',
      timestamp: '2026-11-25T10:00:00Z',
      data: { id: 'r1', status: 'Completed' },
    });
    expect(byType['agent.updated'].data).toEqual({ name: 'bot', version: 3 });
    expect(new Set(offered.map((event) => event.id)).size).toBe(3);
    expect(offered.every((event) => /^evt_[A-Za-z0-9_-]{24}$/.test(event.id))).toBe(true);
    await intake.unsubscribe();
    await log.close();
  });
});
