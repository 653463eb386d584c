import { REGISTRY_SCHEMA, registryMigrations } from '@hangar/agent-registry';
import { ATTACHMENT_SCHEMA, attachmentMigrations } from '@hangar/attachment';
import { EVALUATION_SCHEMA, evaluationMigrations } from '@hangar/evaluation';
import { GOVERNANCE_SCHEMA, governanceMigrations } from '@hangar/governance';
import { ensureVectorTable, KNOWLEDGE_SCHEMA, knowledgeMigrations } from '@hangar/knowledge';
import type { HangarConfig, Logger, ServiceName } from '@hangar/platform';
import { RUN_SCHEMA, runMigrations } from '@hangar/run-executor';
import { SESSION_SCHEMA, sessionMigrations } from '@hangar/session';
import { SKILL_SCHEMA, skillMigrations } from '@hangar/skill';
import type { Migration, StorageProvider } from '@hangar/storage';

/** Every service's schema and its migrations (a service missing here does not compile). */
export const SERVICE_SCHEMAS: Record<ServiceName, { schema: string; migrations: Record<string, Migration> }> = {
  AgentRegistry: { schema: REGISTRY_SCHEMA, migrations: registryMigrations },
  RunExecutor: { schema: RUN_SCHEMA, migrations: runMigrations },
  Session: { schema: SESSION_SCHEMA, migrations: sessionMigrations },
  Skill: { schema: SKILL_SCHEMA, migrations: skillMigrations },
  Attachment: { schema: ATTACHMENT_SCHEMA, migrations: attachmentMigrations },
  Governance: { schema: GOVERNANCE_SCHEMA, migrations: governanceMigrations },
  Knowledge: { schema: KNOWLEDGE_SCHEMA, migrations: knowledgeMigrations },
  Evaluation: { schema: EVALUATION_SCHEMA, migrations: evaluationMigrations },
};

/** Brings every service's schema up to date. */
export async function migrateAll(storage: StorageProvider, logger: Logger): Promise<void> {
  for (const [service, { schema, migrations }] of Object.entries(SERVICE_SCHEMAS)) {
    const pending = await storage.pendingMigrations(schema, migrations);
    await storage.migrate(schema, migrations);
    logger.info({ service, schema, pending }, pending.length ? `${service}: migrations applied` : `${service}: up to date`);
  }
}

/**
 * The knowledge chunk table, whose column type holds Knowledge:Dimensions (so no fixed migration
 * makes it), with the vector extension: made here too, so the service's own role needs no DDL
 * right. A database without pgvector is reported, not failed: knowledge then answers 501.
 */
export async function prepareVectorTable(storage: StorageProvider, config: Pick<HangarConfig, 'Knowledge'>, logger: Logger) {
  const { db, schema } = await storage.open(KNOWLEDGE_SCHEMA, knowledgeMigrations);
  const support = await ensureVectorTable(db, schema, config.Knowledge.Dimensions);
  if (support.available) logger.info({ schema, dimensions: config.Knowledge.Dimensions }, 'Knowledge: vector table ready');
  else logger.warn({ reason: support.reason }, `Knowledge: no vector table, documents and search answer 501: ${support.reason}`);
}

/** Names, per service, of the migrations this build knows that the database lacks. */
export async function missingMigrations(storage: StorageProvider): Promise<Partial<Record<ServiceName, string[]>>> {
  const missing: Partial<Record<ServiceName, string[]>> = {};
  for (const [service, { schema, migrations }] of Object.entries(SERVICE_SCHEMAS)) {
    const pending = await storage.pendingMigrations(schema, migrations);
    if (pending.length) missing[service as ServiceName] = pending;
  }
  return missing;
}

/**
 * Resolves once the database holds every migration this build knows (an init container's wait for
 * the migration Job). A database ahead of this build (a newer Job during a rolling upgrade) counts
 * as ready; one that cannot be reached yet is asked again.
 */
export async function waitForMigrations(storage: StorageProvider, logger: Logger, intervalMs = 2000): Promise<void> {
  let reported = '';
  while (true) {
    const missing = await missingMigrations(storage).catch((error: Error) => ({ error: error.message }));
    if (Object.keys(missing).length === 0) return;
    const report = JSON.stringify(missing);
    if (report !== reported) logger.info({ missing }, 'waiting for the migration Job');
    reported = report;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
