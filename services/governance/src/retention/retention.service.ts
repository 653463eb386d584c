import {
  FIXED_RETENTION_TARGETS,
  RETENTION_DEFAULT_MAX_AGE_MS,
  RETENTION_OWNERS,
  RETENTION_TARGETS,
  type RetentionTarget,
} from '@hangar/contracts';
import { notFound, validationError, type AuditWriter, type Caller } from '@hangar/platform';
import type { RetentionRepository } from './retention.repository.js';

export type RetentionSource = 'Stored' | 'Configuration' | 'Default';

export interface EffectivePolicy {
  target: RetentionTarget;
  maxAgeMs: number | null;
  archive: boolean;
  source: RetentionSource;
  /** Whether the background sweep applies it (Retention:Enabled). */
  enabled: boolean;
}

export interface RetentionResult {
  target: RetentionTarget;
  deleted: number;
  archived: number;
  error?: string;
}

/** Deletes a target's rows older than the cutoff, in its owner's tables. */
export type Purge = (
  target: RetentionTarget,
  options: { cutoff: Date; archive: boolean; batchSize: number; batchDelayMs: number },
) => Promise<{ deleted: number; archived: number }>;

export interface RetentionSettings {
  /** `Retention:Enabled`. */
  enabled: boolean;
  batchSize: number;
  batchDelayMs: number;
  /** `Retention:<Target>` as configured (targets SPEC does not let configuration bind are absent). */
  configured: Partial<Record<RetentionTarget, { maxAgeMs: number | null; archive: boolean }>>;
}

/**
 * API.md "Retention": the effective policy of every SPEC target — stored, else configuration,
 * else SPEC's default — and applying them through the services that own the rows.
 */
export function createRetentionService(deps: {
  repository: RetentionRepository;
  purge: Purge;
  audit: AuditWriter;
  settings: RetentionSettings;
}) {
  const { repository, settings } = deps;

  const knownTarget = (target: string): RetentionTarget => {
    if (!(RETENTION_TARGETS as readonly string[]).includes(target)) throw notFound(`"${target}" is not a retention target`);
    return target as RetentionTarget;
  };

  async function policies(): Promise<EffectivePolicy[]> {
    const stored = new Map((await repository.list()).map((policy) => [policy.target, policy]));
    return RETENTION_TARGETS.map((target) => {
      const own = stored.get(target);
      if (own) return { target, maxAgeMs: own.maxAgeMs, archive: own.archive, source: 'Stored' as const, enabled: settings.enabled };
      const defaults = { maxAgeMs: RETENTION_DEFAULT_MAX_AGE_MS[target], archive: false };
      const configured = settings.configured[target] ?? defaults;
      const differs = configured.maxAgeMs !== defaults.maxAgeMs || configured.archive !== defaults.archive;
      return { target, ...configured, source: differs ? ('Configuration' as const) : ('Default' as const), enabled: settings.enabled };
    });
  }

  return {
    policies,

    async put(caller: Caller, target: string, policy: { maxAgeMs: number | null; archive: boolean }) {
      const known = knownTarget(target);
      if (FIXED_RETENTION_TARGETS.has(known))
        throw validationError(`${known} is kept for a fixed time (SPEC) and cannot be changed`, [
          { path: 'target', message: 'is not writable' },
        ]);
      if (policy.maxAgeMs !== null && !(Number.isInteger(policy.maxAgeMs) && policy.maxAgeMs > 0))
        throw validationError('maxAge must be a positive duration or null', [
          { path: 'maxAge', message: 'must be above zero, or null to keep forever' },
        ]);
      const { created } = await repository.put({ target: known, ...policy });
      await deps.audit(caller, { action: 'retention.updated', resourceType: 'retention', resourceId: known, details: policy });
      return { policy: (await policies()).find((each) => each.target === known)!, created };
    },

    async delete(caller: Caller, target: string) {
      const known = knownTarget(target);
      if (!(await repository.delete(known))) throw notFound(`no stored retention policy for ${known}`);
      await deps.audit(caller, { action: 'retention.reset', resourceType: 'retention', resourceId: known, details: {} });
    },

    /**
     * Applies every policy that deletes something, target by target. A target whose service does not
     * answer is reported with its error; the others are applied all the same. `proceed` is asked
     * before each target (a sweep renews its lease there, and stops when it lost it or is stopping).
     */
    async run(now = new Date(), proceed: () => Promise<boolean> = async () => true): Promise<RetentionResult[]> {
      const results: RetentionResult[] = [];
      for (const policy of await policies()) {
        if (policy.maxAgeMs === null) continue;
        if (!(await proceed())) break;
        if (!RETENTION_OWNERS[policy.target]) {
          results.push({ target: policy.target, deleted: 0, archived: 0 });
          continue;
        }
        try {
          const purged = await deps.purge(policy.target, {
            cutoff: new Date(now.getTime() - policy.maxAgeMs),
            archive: policy.archive,
            batchSize: settings.batchSize,
            batchDelayMs: settings.batchDelayMs,
          });
          results.push({ target: policy.target, ...purged });
        } catch (error) {
          results.push({ target: policy.target, deleted: 0, archived: 0, error: (error as Error).message });
        }
      }
      return results;
    },
  };
}

export type RetentionService = ReturnType<typeof createRetentionService>;
