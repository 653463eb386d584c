import { randomBytes } from 'node:crypto';
import { createKafkaEventLog } from '@hangar/messaging';
import { TEST_KAFKA_BROKERS } from '@hangar/testing';
import RequestQueue from 'kafkajs/src/network/requestQueue/index.js';
import { expect, it } from 'vitest';

/** Counts the checks of pending requests all of this process's Kafka connections make. */
function countChecks() {
  const prototype = RequestQueue.prototype as RequestQueue;
  const check = prototype.checkPendingRequests;
  let checks = 0;
  prototype.checkPendingRequests = function (this: RequestQueue) {
    checks++;
    check.call(this);
  };
  return { count: () => checks, restore: () => (prototype.checkPendingRequests = check) };
}

it('an idle Kafka event log does not poll its connections (kafkajs re-armed a 1 ms timer on each, forever)', async () => {
  const checks = countChecks();
  const log = await createKafkaEventLog({
    brokers: TEST_KAFKA_BROKERS,
    clientId: 'hangar-idle',
    prefix: `t_${randomBytes(5).toString('hex')}.`,
  });
  try {
    await log.append('idle', [{ key: 'k', value: 'v' }]);
    const before = checks.count();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // Unpatched, this second holds several hundred checks per connection (producer and admin).
    expect(checks.count() - before).toBeLessThan(20);
  } finally {
    checks.restore();
    await log.close();
  }
});
