import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import { createKafkaEventLog, type EventLog, type LogRecord } from '@hangar/messaging';
import {
  eventually,
  parseSseFrames,
  startHangar,
  startMockOpenAI,
  TEST_KAFKA_BROKERS,
  TEST_TOKEN,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Run events through the outbox to a real Kafka broker (topic `hangar.run-events`, keyed by the
 * root run), on PostgreSQL: what a consumer such as governance reads.
 */

let mock: MockOpenAI;
let hangar: HangarUnderTest;
let consumerLog: EventLog;
const received: LogRecord[] = [];
const prefix = `t_${randomBytes(5).toString('hex')}.`;

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('delegator', (request) => {
    if (request.messages.some((message) => message.role === 'tool')) return { text: 'relayed' };
    const agentTool = request.tools?.find((entry) => entry.function.name.startsWith('call_'));
    return agentTool ? { toolCall: { name: agentTool.function.name, args: { message: 'go' } } } : { text: 'leaf answer' };
  });
  hangar = await startHangar({
    engine: 'postgres',
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Kafka: { Brokers: TEST_KAFKA_BROKERS, TopicPrefix: prefix },
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
    },
  });
  consumerLog = await createKafkaEventLog({ brokers: TEST_KAFKA_BROKERS, clientId: 'hangar-test-consumer', prefix });
  await consumerLog.subscribe('hangar.run-events', 'test-consumer', async (record) => void received.push(record));
  for (const [name, agents] of [
    ['leaf', []],
    ['lead', ['leaf']],
  ] as const) {
    const created = await hangar.request('POST', '/api/agents', {
      body: { name, model: { provider: 'mock', model: 'delegator' }, agents },
      headers: { 'x-hangar-tenant': 'acme' },
    });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await consumerLog?.close();
  await hangar?.stop();
  await mock?.close();
});

describe('run events on Kafka', () => {
  it('ships every stored event of a run tree, keyed by the root, in order, as the events API shows them', async () => {
    const response = await fetch(`${hangar.url}/api/agents/lead/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', 'x-hangar-tenant': 'acme' },
      body: JSON.stringify({ message: 'delegate' }),
    });
    const rootId = JSON.parse(/^data: (.*)$/m.exec(await response.text())![1]).runId as string;
    const tree = (await hangar.request('GET', `/api/runs/${rootId}/tree`, { headers: { 'x-hangar-tenant': 'acme' } })).body;
    expect(tree).toHaveLength(2);

    const envelopes = await eventually(
      () => {
        const mine = received
          .map((record) => ({ key: record.key, ...JSON.parse(record.value) }))
          .filter((event) => event.rootRunId === rootId);
        return mine.some((event) => event.runId === rootId && event.type === 'run.completed') ? mine : undefined;
      },
      'the root run.completed on Kafka',
      20_000,
    );
    expect(envelopes.every((event) => event.key === rootId && event.tenantId === 'acme')).toBe(true);

    for (const run of tree) {
      const stored = await fetch(`${hangar.url}/api/runs/${run.id}/events`, {
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'x-hangar-tenant': 'acme' },
      });
      const fromApi = parseSseFrames(await stored.text()).map((frame) => frame.data);
      const fromKafka = envelopes.filter((event) => event.runId === run.id);
      // At-least-once: a record may repeat; its first copies follow the stored order exactly.
      const firstCopies = fromKafka.filter((event, index) => fromKafka.findIndex((other) => other.seq === event.seq) === index);
      expect(firstCopies.map((event) => [event.seq, event.type, event.data])).toEqual(
        fromApi.map((event) => [event.seq, event.type, event.data]),
      );
    }
  });
});
