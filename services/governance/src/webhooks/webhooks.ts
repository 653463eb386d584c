import { RunExecutorServiceDefinition, runRecordJson } from '@hangar/contracts';
import type { Subscription } from '@hangar/messaging';
import {
  createEgressClient,
  createServiceClient,
  HANGAR_VERSION,
  namedSecret,
  type AuditWriter,
  type ContentCipher,
  type HangarConfig,
  type ModuleContext,
} from '@hangar/platform';
import type { Kysely } from '@hangar/storage';
import type { GovernanceDatabase } from '../governance.database.js';
import type { ServiceChannels } from '../service-channels.js';
import { createSubscriberCache } from './subscriber-cache.js';
import { createDeliveryWorker } from './webhook-delivery.js';
import { startWebhookIntake } from './webhook-intake.js';
import { createWebhookRepository } from './webhook.repository.js';
import { createWebhookService } from './webhook.service.js';

/** Attempts in flight at once per governance process. */
const WEBHOOK_CONCURRENCY = 16;
/** How often due deliveries are looked for without a nudge (retries planned by other instances, takeovers). */
const WEBHOOK_POLL_MS = 1000;

/**
 * Webhook subscriptions and their delivery (API.md "Webhooks"): events come in from the event log,
 * deliveries wait in the database until attempted. With `Webhooks:Enabled` false subscriptions can
 * still be managed, but nothing is taken in or sent.
 */
export async function startWebhooks(
  config: HangarConfig,
  deps: Pick<ModuleContext, 'engines' | 'logger'> & {
    db: Kysely<GovernanceDatabase>;
    audit: AuditWriter;
    cipher: ContentCipher;
    channels: ServiceChannels;
  },
) {
  const { Webhooks } = config;
  const { logger } = deps;
  const egressPolicy = {
    allowPrivateNetworkTargets: config.Egress.AllowPrivateNetworkTargets || Webhooks.AllowPrivateNetworkTargets,
    allowInsecureHttp: Webhooks.AllowInsecureHttp,
  };
  const repository = createWebhookRepository(deps.db, deps.cipher);
  const subscribers = createSubscriberCache({ repository, pubsub: deps.engines.pubsub, logger });
  let worker: ReturnType<typeof createDeliveryWorker> | undefined;
  const service = createWebhookService({
    repository,
    subscribers,
    audit: deps.audit,
    queued: () => worker?.nudge(),
    settings: {
      secretKeyPrefix: Webhooks.AllowedConfigurationPrefix,
      maxExtraHeaders: Webhooks.MaxExtraHeaders,
      egress: egressPolicy,
      delivering: Webhooks.Enabled,
    },
  });
  if (!Webhooks.Enabled) {
    logger.warn('Webhooks:Enabled is false: webhook subscriptions are kept, but no event is taken in and nothing is delivered');
    return { service, stop: async () => {} };
  }
  const egress = createEgressClient(egressPolicy);
  worker = createDeliveryWorker({
    repository,
    egress,
    secret: (secretKey) => {
      const value = namedSecret(config.Hangar.WebhookSecrets, 'Hangar:WebhookSecrets:', Webhooks.AllowedConfigurationPrefix, secretKey);
      return value === undefined
        ? { error: `the signing secret "${secretKey}" is not configured (or not under Webhooks:AllowedConfigurationPrefix)` }
        : { value };
    },
    disabled: (delivery) =>
      void service.disabledByFailures(
        delivery,
        `${Webhooks.DisableAfterConsecutiveFailures} consecutive failed attempts (Webhooks:DisableAfterConsecutiveFailures)`,
      ),
    logger,
    settings: {
      timeoutMs: Webhooks.Timeout,
      maxResponseBytes: Webhooks.MaxResponseBytes,
      retryDelaysMs: Webhooks.RetryDelays,
      disableAfter: Webhooks.DisableAfterConsecutiveFailures,
      concurrency: WEBHOOK_CONCURRENCY,
      pollIntervalMs: WEBHOOK_POLL_MS,
      userAgent: `Hangar-Webhooks/${HANGAR_VERSION}`,
    },
  });
  let runs: ReturnType<typeof createServiceClient<typeof RunExecutorServiceDefinition>> | undefined;
  const runRecord = async (tenantId: string, runId: string) => {
    runs ??= createServiceClient(RunExecutorServiceDefinition, deps.channels.to('RunExecutor'));
    const { run } = await runs.getRun({ runId }, { caller: { tenantId, actor: 'governance-webhooks' } });
    return runRecordJson(run!);
  };
  let intake: Subscription | undefined;
  try {
    await subscribers.start();
    intake = await startWebhookIntake({ eventLog: deps.engines.eventLog, offer: service.offer, runRecord, cipher: deps.cipher, logger });
    worker.start();
  } catch (error) {
    egress.close();
    await subscribers.stop();
    throw error;
  }
  return {
    service,
    async stop() {
      await intake?.unsubscribe();
      await worker?.stop();
      await subscribers.stop();
      egress.close();
    },
  };
}
