import RequestQueue from 'kafkajs/src/network/requestQueue/index.js';

const PATCHED = Symbol.for('hangar.kafkajsIdleLoopStopped');

/**
 * kafkajs 2.2.4, its last release, re-arms a timer of -Date.now() ms (run after 1 ms) on every
 * broker connection after every check of its pending requests, pending or not: each process that
 * talks to Kafka wakes some thousand times a second per connection while idle (tulios/kafkajs#1556,
 * #1704; Node 24 warns "TimeoutNegativeWarning", #1751). With nothing pending and no throttle in
 * effect there is nothing to check: a request pushed later schedules its own check (`push`), and
 * one answered checks the queue (`fulfillRequest`). Patched once per module instance, before any
 * connection is made.
 */
export function stopKafkajsIdleLoop(): void {
  const prototype = RequestQueue.prototype as RequestQueue & { [PATCHED]?: true };
  if (prototype[PATCHED]) return;
  const schedule = prototype.scheduleCheckPendingRequests;
  prototype.scheduleCheckPendingRequests = function (this: RequestQueue) {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    schedule.call(this);
  };
  prototype[PATCHED] = true;
}
