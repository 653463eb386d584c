import { GovernanceServiceDefinition, RUN_EVENTS_TOPIC } from '@hangar/contracts';
import { grpcServiceModule } from '@hangar/platform';
import { createAuditRepository } from './audit.repository.js';
import type { GovernanceDatabase } from './governance.database.js';
import { createIdempotencyRepository } from './idempotency.repository.js';
import { createQuotaRepository } from './quota.repository.js';
import { governanceGrpc } from './governance.grpc.js';
import { createGovernanceService } from './governance.service.js';
import { governanceMigrations } from './migrations/index.js';

const IDEMPOTENCY_SWEEP_MS = 10 * 60 * 1000;
const QUOTA_CONSUMER_GROUP = 'governance-quotas';

/** The Governance process: so far the audit trail and the idempotency keys the gateway keeps. */
export const governanceModule = grpcServiceModule({
  name: 'Governance',
  async setup({ config, engines, logger }, grpc) {
    const database = await engines.storage.open<GovernanceDatabase>('governance', governanceMigrations);
    const service = createGovernanceService({
      audit: createAuditRepository(database.db),
      idempotency: createIdempotencyRepository(database.db),
      quotas: createQuotaRepository(database.db),
      quotaSettings: { enabled: config.Quotas.Enabled, timeZone: config.Quotas.TimeZone },
    });
    grpc.server.add(GovernanceServiceDefinition, governanceGrpc(service));
    // Expired idempotency keys are also forgotten one by one when reused; the sweep keeps the table small.
    const sweep = setInterval(() => {
      service.purgeExpiredIdempotencyKeys().catch((error) => logger.warn({ err: error }, 'idempotency key sweep failed'));
    }, IDEMPOTENCY_SWEEP_MS);
    sweep.unref();
    // Quota usage comes from the run events on the event log (at-least-once; counting is idempotent).
    const runEvents = await engines.eventLog.subscribe(RUN_EVENTS_TOPIC, QUOTA_CONSUMER_GROUP, async (record) => {
      await service.countRunEvent(JSON.parse(record.value));
    });
    return {
      close: async () => {
        clearInterval(sweep);
        await runEvents.unsubscribe();
      },
    };
  },
});
