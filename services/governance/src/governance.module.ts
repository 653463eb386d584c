import {
  API_KEY_REVOCATIONS_CHANNEL,
  GovernanceServiceDefinition,
  quotaNoticeChannel,
  RetentionPolicyServiceDefinition,
  RunEventEnvelopeSchema,
  RUN_EVENTS_TOPIC,
  QUOTA_CHANGES_CHANNEL,
  TENANT_CHANGES_CHANNEL,
  WebhookServiceDefinition,
} from '@hangar/contracts';
import { namesEventOf, parseMessage } from '@hangar/messaging';
import { auditOrLog, contentCipherFrom, grpcServiceModule, inConsumerSpans, openRunEventData, refreshedGauge } from '@hangar/platform';
import { createApiKeyRepository } from './api-keys/api-key.repository.js';
import { createApiKeyService } from './api-keys/api-key.service.js';
import { createAuditRepository } from './audit.repository.js';
import type { GovernanceDatabase } from './governance.database.js';
import { createIdempotencyRepository } from './idempotency.repository.js';
import { createQuotaRepository } from './quota.repository.js';
import { governanceGrpc } from './governance.grpc.js';
import { COUNTED_RUN_EVENTS, createGovernanceService } from './governance.service.js';
import { GOVERNANCE_SCHEMA, governanceMigrations } from './migrations/index.js';
import { createTenantRepository } from './tenants/tenant.repository.js';
import { createTenantService } from './tenants/tenant.service.js';
import { createQuotaRuleCache } from './quota-rule-cache.js';
import { createQuotaThresholds } from './quota-thresholds.js';
import { startRetention } from './retention/retention.js';
import { retentionPolicyGrpc } from './retention/retention.grpc.js';
import { webhookGrpc } from './webhooks/webhook.grpc.js';
import { eventIdOf } from './webhooks/webhook-signing.js';
import { startWebhooks } from './webhooks/webhooks.js';
import { createServiceChannels } from './service-channels.js';

const IDEMPOTENCY_SWEEP_MS = 10 * 60 * 1000;
const QUOTA_CONSUMER_GROUP = 'governance-quotas';
/** Run events quotas take from the log at a time (most count nothing: text deltas). */
const QUOTA_BATCH_RECORDS = 500;
/** How often the moments API keys were last used are written (one write per key per flush, not per request). */
const API_KEY_USE_FLUSH_MS = 10_000;

/** The Governance process: tenants, API keys, quotas, webhooks, the audit trail and the idempotency keys the gateway keeps. */
export const governanceModule = grpcServiceModule({
  name: 'Governance',
  async setup({ config, engines, logger, metrics, addressOf }, grpc) {
    const database = await engines.storage.open<GovernanceDatabase>(GOVERNANCE_SCHEMA, governanceMigrations);
    const cipher = contentCipherFrom(config);
    const quotas = createQuotaRepository(database.db);
    const audit = auditOrLog(async (caller, entry) => void (await service.recordAudit(caller, entry)), logger);
    const ruleCache = config.Quotas.Enabled ? createQuotaRuleCache({ quotas, pubsub: engines.pubsub, logger }) : undefined;
    await ruleCache?.start();
    const thresholds = ruleCache
      ? createQuotaThresholds({
          quotas,
          // Checked after every counted run event: the tenant's rules come from the cache.
          rules: ruleCache.rules,
          percents: config.Quotas.ThresholdPercents,
          timeZone: config.Quotas.TimeZone,
          offer: async (notice, { tenantId, noticeKey }) =>
            void (await webhooks.service.offer({
              id: eventIdOf(`quota:${noticeKey}`),
              tenantId,
              type: 'quota.threshold',
              timestamp: new Date().toISOString(),
              data: () => notice,
            })),
          announce: async (notice, { tenantId, rootRunId }) => {
            await audit(
              { tenantId, actor: 'governance' },
              { action: 'quota.threshold', resourceType: 'quota', resourceId: notice.quota, details: notice },
            );
            // A hint for a stream that may still be open; the webhook and the trail are the record.
            if (config.Quotas.PublishThresholdToRunStream)
              await engines.pubsub.publish(quotaNoticeChannel(rootRunId), JSON.stringify(notice)).catch((error) => {
                logger.warn({ err: error, rootRunId }, 'a quota threshold notice could not be published to its run stream');
              });
          },
        })
      : undefined;
    const service = createGovernanceService({
      audit: createAuditRepository(database.db),
      idempotency: createIdempotencyRepository(database.db, cipher),
      quotas,
      quotaSettings: { enabled: config.Quotas.Enabled, timeZone: config.Quotas.TimeZone },
      thresholds,
      // A lost announcement leaves an executor skipping admission for a newly covered agent until its cache expires.
      announceQuotaChange: (tenantId) => {
        // This process's notices follow the change at once; other processes once the announcement reaches them.
        ruleCache?.forget(tenantId);
        return engines.pubsub.publish(QUOTA_CHANGES_CHANNEL, JSON.stringify({ id: tenantId })).catch((error) => {
          logger.warn({ err: error, tenantId }, 'quota rule change could not be announced; executors learn it when their cache expires');
        });
      },
    });
    const apiKeys = createApiKeyService({
      repository: createApiKeyRepository(database.db),
      audit,
      // A lost announcement leaves a revoked key usable only until the gateways' caches expire.
      announceRevocation: (id) =>
        engines.pubsub.publish(API_KEY_REVOCATIONS_CHANNEL, JSON.stringify({ id })).catch((error) => {
          logger.warn(
            { err: error, apiKeyId: id },
            'API key revocation could not be announced; gateways forget it when their cache expires',
          );
        }),
    });
    const tenants = createTenantService({
      repository: createTenantRepository(database.db),
      audit,
      // A lost announcement leaves the old state in caches only until they expire.
      announceChange: (id) =>
        engines.pubsub.publish(TENANT_CHANGES_CHANNEL, JSON.stringify({ id })).catch((error) => {
          logger.warn({ err: error, tenantId: id }, 'tenant change could not be announced; caches learn it when they expire');
        }),
      settings: {
        platformTenantId: config.DefaultTenantId,
        providerKeyPrefix: config.TenantProviders.AllowedConfigurationPrefix,
        allowPrivateNetworkTargets: config.Egress.AllowPrivateNetworkTargets,
      },
    });
    grpc.server.add(GovernanceServiceDefinition, governanceGrpc(service, apiKeys, tenants));
    const channels = createServiceChannels(addressOf);
    const webhooks = await startWebhooks(config, {
      channels,
      db: database.db,
      engines,
      logger,
      audit,
      cipher,
    });
    grpc.server.add(WebhookServiceDefinition, webhookGrpc(webhooks.service));
    const retention = startRetention(config, { db: database.db, schema: database.schema, audit, logger, channels, cipher });
    grpc.server.add(RetentionPolicyServiceDefinition, retentionPolicyGrpc(retention.service, retention.resealContent));
    const flush = setInterval(() => {
      apiKeys.flushLastUsed().catch((error) => logger.warn({ err: error }, 'API key last-use times could not be written'));
    }, API_KEY_USE_FLUSH_MS);
    flush.unref();
    // Expired idempotency keys are also forgotten one by one when reused; the sweep keeps the table small.
    const sweep = setInterval(() => {
      service.purgeExpiredIdempotencyKeys().catch((error) => logger.warn({ err: error }, 'idempotency key sweep failed'));
    }, IDEMPOTENCY_SWEEP_MS);
    sweep.unref();
    // Quota usage comes from the run events on the event log (at-least-once; counting is idempotent),
    // counted a batch at a time: one statement for whatever the log holds when the consumer asks.
    const runEvents = await engines.eventLog.subscribeBatches(
      RUN_EVENTS_TOPIC,
      QUOTA_CONSUMER_GROUP,
      async (records) => {
        const events = records.flatMap((record) => {
          const message = parseMessage(record.value);
          // Most events count nothing (a text delta): skipped before validation and a span of their own.
          if (!namesEventOf(message, COUNTED_RUN_EVENTS)) return [];
          const parsed = RunEventEnvelopeSchema.safeParse(message);
          // A record that is not an envelope is skipped: retried, it would hold every later one up.
          if (parsed.success) return [parsed.data];
          logger.warn({ offset: record.offset }, 'a run event on the event log is not an envelope; quotas skip it');
          return [];
        });
        if (!events.length) return;
        await inConsumerSpans(
          events.map((event) => ({
            topic: RUN_EVENTS_TOPIC,
            group: QUOTA_CONSUMER_GROUP,
            traceparent: event.traceparent,
            attributes: { 'hangar.run.id': event.runId, 'hangar.event.type': event.type },
          })),
          // Through Kafka an event's data comes as the outbox stored it: sealed when content protection is on.
          () => service.countRunEvents(events.map((event) => ({ ...event, data: openRunEventData(cipher, event) }))),
        );
      },
      { maxRecords: QUOTA_BATCH_RECORDS },
    );
    const quotaGauge = config.Observability.EnableQuotaUsageGauge
      ? refreshedGauge({
          meter: metrics.meter,
          name: 'hangar_quota_usage_ratio',
          description: 'How much of each quota rule its current window has used (1 is the limit), per tenant, rule and metric',
          refreshMs: config.Observability.QuotaUsageRefreshInterval,
          read: async () =>
            (await service.quotaUsage()).map(({ tenantId, rule, metric, ratio }) => ({
              labels: { tenant: tenantId, rule, metric },
              value: ratio,
            })),
          logger,
        })
      : undefined;
    return {
      close: async () => {
        quotaGauge?.stop();
        await ruleCache?.stop();
        clearInterval(sweep);
        clearInterval(flush);
        await apiKeys.flushLastUsed().catch(() => {});
        await runEvents.unsubscribe();
        await webhooks.stop();
        await retention.stop();
        channels.close();
      },
    };
  },
});
