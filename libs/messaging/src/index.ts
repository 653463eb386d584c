export * from './ports.js';
export { createInProcessEventLog, createInProcessPubSub } from './in-process.js';
export { createRedisPubSub, type RedisPubSubOptions } from './redis.js';
export { createKafkaEventLog, type KafkaEventLogOptions } from './kafka.js';
export { createFixedWindowLimiter, type FixedWindowLimiter, type WindowTake } from './rate-limit.js';
export { createSharedSlots, type SharedSlots, type SharedSlotsOptions } from './shared-slots.js';
export { announcedId, createAnnouncedCache, type AnnouncedCache, type AnnouncedCacheOptions } from './announced-cache.js';
export * from './outbox-relay.js';
export { namesEventOf, parseMessage } from './parse-message.js';
