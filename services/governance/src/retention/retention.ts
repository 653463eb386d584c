import { randomUUID } from 'node:crypto';
import { RETENTION_OWNERS, RetentionServiceDefinition, type RetentionTarget } from '@hangar/contracts';
import {
  createServiceClient,
  resealInBatches,
  type AuditWriter,
  type Caller,
  type ContentCipher,
  type HangarConfig,
  type Logger,
} from '@hangar/platform';
import { purgeInBatches, type Kysely } from '@hangar/storage';
import type { GovernanceDatabase } from '../governance.database.js';
import type { ServiceChannels } from '../service-channels.js';
import { GOVERNANCE_RETENTION_TARGETS } from './retention-targets.js';
import { GOVERNANCE_SEALED_COLUMNS } from './sealed-columns.js';
import { createRetentionRepository } from './retention.repository.js';
import { createRetentionService, type Purge, type RetentionSettings } from './retention.service.js';

type Owner = NonNullable<(typeof RETENTION_OWNERS)[RetentionTarget]>;
/** The services besides governance whose tables hold protected columns. */
const CONTENT_OWNERS: Owner[] = ['RunExecutor', 'Session', 'Attachment'];
const RESEAL_BATCH = 500;

/** How often the background sweep runs while Retention:Enabled (SPEC sets no interval). */
const SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/** The first sweep after a start, so a restarted instance does not wait an hour. */
const FIRST_SWEEP_MS = 60 * 1000;
/** Held while one instance sweeps, renewed before each target; a holder that died frees it when it runs out. */
const SWEEP_LEASE_MS = 15 * 60 * 1000;

/**
 * Retention (API.md "Retention"): policies kept here, rows purged by the service that owns them
 * (governance's own directly, the others over RetentionService), and, while Retention:Enabled, a
 * sweep that one instance at a time runs under a lease.
 */
export function startRetention(
  config: HangarConfig,
  deps: {
    channels: ServiceChannels;
    db: Kysely<GovernanceDatabase>;
    schema: string;
    audit: AuditWriter;
    logger: Logger;
    cipher: ContentCipher;
  },
) {
  const { Retention } = config;
  const repository = createRetentionRepository(deps.db);
  const clientOf = (service: Owner) => createServiceClient(RetentionServiceDefinition, deps.channels.to(service));
  const purge: Purge = async (target, options) => {
    const owner = RETENTION_OWNERS[target];
    const local = GOVERNANCE_RETENTION_TARGETS[target as keyof typeof GOVERNANCE_RETENTION_TARGETS];
    if (owner === 'Governance' && local) return purgeInBatches(deps.db, deps.schema, local, options);
    const result = await clientOf(owner!).purge(
      {
        target,
        cutoff: options.cutoff.toISOString(),
        archive: options.archive,
        batchSize: options.batchSize,
        batchDelayMs: options.batchDelayMs,
      },
      { caller: { tenantId: config.DefaultTenantId, actor: 'governance-retention' } },
    );
    return { deleted: Number(result.deleted), archived: Number(result.archived) };
  };
  // The targets whose rows a service stores; the others' keys are named as not yet effective at start.
  const configured: RetentionSettings['configured'] = {
    RunEvents: { maxAgeMs: Retention.RunEvents.MaxAge, archive: Retention.RunEvents.Archive },
    Jobs: { maxAgeMs: Retention.Jobs.MaxAge, archive: Retention.Jobs.Archive },
    WebhookDeliveries: { maxAgeMs: Retention.WebhookDeliveries.MaxAge, archive: Retention.WebhookDeliveries.Archive },
    SkillScriptGrants: { maxAgeMs: Retention.SkillScriptGrants.MaxAge, archive: Retention.SkillScriptGrants.Archive },
    Attachments: { maxAgeMs: Retention.Attachments.MaxAge, archive: Retention.Attachments.Archive },
    Sessions: { maxAgeMs: Retention.Sessions.MaxAge, archive: Retention.Sessions.Archive },
    RunInputs: { maxAgeMs: Retention.RunInputs.MaxAge, archive: Retention.RunInputs.Archive },
    RunScores: { maxAgeMs: Retention.RunScores.MaxAge, archive: Retention.RunScores.Archive },
    Spans: { maxAgeMs: Retention.Spans.MaxAge, archive: Retention.Spans.Archive },
    DocumentEmbeddings: { maxAgeMs: Retention.DocumentEmbeddings.MaxAge, archive: Retention.DocumentEmbeddings.Archive },
    EvalCaseResults: { maxAgeMs: Retention.EvalCaseResults.MaxAge, archive: Retention.EvalCaseResults.Archive },
    WorkflowCheckpoints: { maxAgeMs: Retention.WorkflowCheckpoints.MaxAge, archive: Retention.WorkflowCheckpoints.Archive },
    VoiceSessions: { maxAgeMs: Retention.VoiceSessions.MaxAge, archive: Retention.VoiceSessions.Archive },
  };
  const service = createRetentionService({
    repository,
    purge,
    audit: deps.audit,
    settings: { enabled: Retention.Enabled, batchSize: Retention.BatchSize, batchDelayMs: Retention.BatchDelay, configured },
  });

  const owner = `retention-${randomUUID()}`;
  let sweeping: Promise<void> | undefined;
  let stopping = false;
  const sweep = async () => {
    if (!(await repository.takeLease(owner, SWEEP_LEASE_MS))) return;
    try {
      const proceed = async () => !stopping && (await repository.takeLease(owner, SWEEP_LEASE_MS));
      for (const result of await service.run(new Date(), proceed)) {
        if (result.error) deps.logger.warn({ target: result.target, reason: result.error }, 'retention could not be applied to a target');
        else if (result.deleted) deps.logger.info({ ...result }, 'retention applied');
      }
    } finally {
      await repository.releaseLease(owner);
    }
  };
  const runSweep = () => {
    sweeping ??= sweep()
      .catch((error) => deps.logger.warn({ err: error }, 'retention sweep failed; the next one tries again'))
      .finally(() => (sweeping = undefined));
  };
  const first = Retention.Enabled ? setTimeout(runSweep, FIRST_SWEEP_MS) : undefined;
  const timer = Retention.Enabled ? setInterval(runSweep, SWEEP_INTERVAL_MS) : undefined;
  first?.unref();
  timer?.unref();

  /** Moves every service's protected values to the active key; each service's outcome, one failing not stopping the others. */
  async function resealContent(caller: Caller): Promise<Array<{ service: string; resealed: number; error?: string }>> {
    const results: Array<{ service: string; resealed: number; error?: string }> = [];
    const reseal = async (service: string, work: () => Promise<number>) => {
      try {
        results.push({ service, resealed: await work() });
      } catch (error) {
        results.push({ service, resealed: 0, error: (error as Error).message });
      }
    };
    await reseal('Governance', async () => {
      let resealed = 0;
      for (const column of GOVERNANCE_SEALED_COLUMNS)
        resealed += await resealInBatches(deps.db, deps.schema, column, deps.cipher, RESEAL_BATCH);
      return resealed;
    });
    for (const service of CONTENT_OWNERS) {
      await reseal(service, async () =>
        Number(
          (
            await clientOf(service).reseal(
              { batchSize: RESEAL_BATCH },
              { caller: { tenantId: config.DefaultTenantId, actor: 'governance-reseal' } },
            )
          ).resealed,
        ),
      );
    }
    await deps.audit(caller, {
      action: 'content.resealed',
      resourceType: 'content-protection',
      resourceId: cipherKey(),
      details: { results },
    });
    return results;
  }
  const cipherKey = () => deps.cipher.activeKeyId ?? 'none';

  return {
    service,
    resealContent,
    /** Stops sweeping: a sweep under way ends after the target it is purging. */
    async stop() {
      stopping = true;
      clearTimeout(first);
      clearInterval(timer);
      await sweeping;
    },
  };
}
