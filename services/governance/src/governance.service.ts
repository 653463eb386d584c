import type { RunEventEnvelope } from '@hangar/contracts';
import { clampPage, isUuid, notFound, validationError, type Caller, RECORD_NAME } from '@hangar/platform';
import type { AuditEntry, AuditFilter, AuditRepository } from './audit.repository.js';
import type { BeginOutcome, IdempotencyRepository, StoredResponse } from './idempotency.repository.js';
import type { QuotaThresholds } from './quota-thresholds.js';
import { checkTimeZone, quotaWindow } from './quota-window.js';
import { QUOTA_METRICS, QUOTA_PERIODS, type QuotaMetric, type QuotaRepository, type QuotaRuleRow } from './quota.repository.js';

export interface QuotaStatus extends QuotaRuleRow {
  used: number;
  windowStart: string;
  resetsAt: string;
}

const TERMINAL_RUN_EVENTS = new Set(['run.completed', 'run.failed', 'run.canceled']);
/** The run events quotas count (a started run, what a finished one used); every other one counts nothing. */
export const COUNTED_RUN_EVENTS: ReadonlySet<string> = new Set(['run.started', ...TERMINAL_RUN_EVENTS]);

/** SPEC Retention: idempotency keys are kept one day, not bindable from configuration. */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** What a run event adds to each quota metric: a started run one run, a finished one its tokens and cost. */
function amountsOf(event: RunEventEnvelope): Array<{ metric: QuotaMetric; amount: number }> {
  const amounts: Array<{ metric: QuotaMetric; amount: number }> = [];
  if (event.type === 'run.started') amounts.push({ metric: 'Runs', amount: 1 });
  if (TERMINAL_RUN_EVENTS.has(event.type)) {
    const tokens = event.data.usage?.totalTokens ?? 0;
    const cost = event.data.cost?.total ?? 0;
    if (tokens > 0) amounts.push({ metric: 'Tokens', amount: tokens });
    if (cost > 0) amounts.push({ metric: 'Cost', amount: cost });
  }
  return amounts;
}

/**
 * The agent name usage outside any run is kept under: no agent's (names are never empty), so only
 * the rules for every agent of the tenant sum it.
 */
const SPEND_WITHOUT_AGENT = '';

type IdempotencyTarget = { scope: string; key: string };

const ACTION = /^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/;

/** Governance rules; so far the audit trail (who did what to which resource, per tenant). */
export function createGovernanceService(deps: {
  audit: AuditRepository;
  idempotency: IdempotencyRepository;
  quotas: QuotaRepository;
  quotaSettings: { enabled: boolean; timeZone: string };
  /** Announces thresholds that counted usage reached (absent: none are announced). */
  thresholds?: QuotaThresholds;
  /** Tells run executors a tenant's rules changed, before the change is answered (they cache which agents no rule covers). */
  announceQuotaChange: (tenantId: string) => Promise<void>;
}) {
  const { timeZone } = deps.quotaSettings;
  checkTimeZone(timeZone);

  async function statusOf(tenantId: string, rule: QuotaRuleRow, now = new Date()): Promise<QuotaStatus> {
    const window = quotaWindow(rule.period, timeZone, now);
    const used = await deps.quotas.used(tenantId, rule.metric, rule.agentName, window.start, window.end);
    return { ...rule, used, windowStart: window.start.toISOString(), resetsAt: window.end.toISOString() };
  }

  /** The first of the rules whose current window is used up, if any (an admission's answer). */
  async function firstUsedUp(tenantId: string, rules: QuotaRuleRow[]): Promise<QuotaStatus | undefined> {
    const now = new Date();
    for (const rule of rules) {
      const status = await statusOf(tenantId, rule, now);
      if (status.used >= status.limit) return status;
    }
    return undefined;
  }

  const target = (caller: Caller, { scope, key }: IdempotencyTarget) => {
    const errors = [
      ...(scope.trim() ? [] : [{ path: 'scope', message: 'is required' }]),
      ...(key.trim() ? [] : [{ path: 'key', message: 'is required' }]),
    ];
    if (errors.length) throw validationError('the idempotency key is not valid', errors);
    return { tenantId: caller.tenantId, scope, key };
  };

  return {
    /** Decides what a request under an idempotency key does: execute, replay, wait, or refuse. */
    beginIdempotent(caller: Caller, request: IdempotencyTarget & { fingerprint: string; lockMs: number }): Promise<BeginOutcome> {
      if (!request.fingerprint)
        throw validationError('a request fingerprint is required', [{ path: 'fingerprint', message: 'is required' }]);
      return deps.idempotency.begin(target(caller, request), request.fingerprint, Math.max(1000, request.lockMs), IDEMPOTENCY_RETENTION_MS);
    },

    completeIdempotent: (caller: Caller, request: IdempotencyTarget, response: StoredResponse) =>
      deps.idempotency.complete(target(caller, request), response),

    releaseIdempotent: (caller: Caller, request: IdempotencyTarget) => deps.idempotency.release(target(caller, request)),

    purgeExpiredIdempotencyKeys: () => deps.idempotency.purgeExpired(),

    /** Creates or replaces a quota rule (`name`, `metric` Runs|Tokens|Cost, `period` Hour|Day|Month, `limit` > 0, optional `agentName`). */
    async putQuotaRule(caller: Caller, rule: QuotaRuleRow) {
      const errors = [
        ...(RECORD_NAME.test(rule.name) ? [] : [{ path: 'name', message: 'must be 1-64 characters of letters, digits, ".", "_" or "-"' }]),
        ...((QUOTA_METRICS as readonly string[]).includes(rule.metric)
          ? []
          : [{ path: 'metric', message: `must be one of ${QUOTA_METRICS.join(', ')}` }]),
        ...((QUOTA_PERIODS as readonly string[]).includes(rule.period)
          ? []
          : [{ path: 'period', message: `must be one of ${QUOTA_PERIODS.join(', ')}` }]),
        ...(Number.isFinite(rule.limit) && rule.limit > 0 ? [] : [{ path: 'limit', message: 'must be a number above 0' }]),
        ...(rule.agentName === null || (rule.agentName.length > 0 && rule.agentName.length <= 128)
          ? []
          : [{ path: 'agentName', message: 'must be 1-128 characters when given' }]),
      ];
      if (errors.length) throw validationError('the quota rule is not valid', errors);
      const saved = await deps.quotas.putRule(caller.tenantId, rule);
      await deps.announceQuotaChange(caller.tenantId);
      return { rule: await statusOf(caller.tenantId, saved.rule), created: saved.created };
    },

    async listQuotaRules(caller: Caller): Promise<QuotaStatus[]> {
      const now = new Date();
      return Promise.all((await deps.quotas.rules(caller.tenantId)).map((rule) => statusOf(caller.tenantId, rule, now)));
    },

    /** How much of each rule of every tenant its current window has used (0..1 and beyond), for the quota usage gauge. */
    async quotaUsage(): Promise<Array<{ tenantId: string; rule: string; metric: QuotaMetric; ratio: number }>> {
      const now = new Date();
      return Promise.all(
        (await deps.quotas.allRules()).map(async ({ tenantId, ...rule }) => {
          const status = await statusOf(tenantId, rule, now);
          return { tenantId, rule: rule.name, metric: rule.metric, ratio: status.used / rule.limit };
        }),
      );
    },

    async deleteQuotaRule(caller: Caller, name: string) {
      if (!(await deps.quotas.deleteRule(caller.tenantId, name))) throw notFound(`quota rule "${name}" not found`);
      await deps.announceQuotaChange(caller.tenantId);
    },

    /** SPEC Agents 11: a run starts only while no rule that covers its agent is used up. */
    async admitRun(
      caller: Caller,
      agentName: string,
    ): Promise<{ admitted: true; governed: boolean } | { admitted: false; governed: true; exceeded: QuotaStatus }> {
      if (!deps.quotaSettings.enabled) return { admitted: true, governed: false };
      const rules = await deps.quotas.rules(caller.tenantId, agentName);
      const exceeded = await firstUsedUp(caller.tenantId, rules);
      return exceeded ? { admitted: false, governed: true, exceeded } : { admitted: true, governed: rules.length > 0 };
    },

    /**
     * Spend outside any run (an image generation, speech, a transcription) may happen while no Cost
     * rule for every agent of the tenant is used up: an agent's rule or another metric is not about it.
     */
    async admitSpend(caller: Caller): Promise<{ admitted: true } | { admitted: false; exceeded: QuotaStatus }> {
      if (!deps.quotaSettings.enabled) return { admitted: true };
      const rules = (await deps.quotas.rules(caller.tenantId)).filter((rule) => rule.agentName === null && rule.metric === 'Cost');
      const exceeded = await firstUsedUp(caller.tenantId, rules);
      return exceeded ? { admitted: false, exceeded } : { admitted: true };
    },

    /** Counts spend outside any run toward the tenant's Cost rules for every agent, once per id; answers whether it was counted now. */
    async countSpend(caller: Caller, spend: { id: string; cost: number; at: Date }): Promise<boolean> {
      const errors = [
        ...(isUuid(spend.id) ? [] : [{ path: 'id', message: 'must be a UUID' }]),
        ...(Number.isFinite(spend.cost) && spend.cost >= 0 ? [] : [{ path: 'cost', message: 'must be a number of at least 0' }]),
        ...(Number.isNaN(spend.at.getTime()) ? [{ path: 'at', message: 'must be a time' }] : []),
      ];
      if (errors.length) throw validationError('the spend is not valid', errors);
      if (spend.cost === 0) return false;
      const counted = await deps.quotas.countEvents([
        {
          runId: spend.id,
          seq: 0,
          tenantId: caller.tenantId,
          agentName: SPEND_WITHOUT_AGENT,
          at: spend.at,
          amounts: [{ metric: 'Cost', amount: spend.cost }],
        },
      ]);
      // No run streams it: a notice goes to webhooks and the audit trail only.
      await deps.thresholds?.check({ tenantId: caller.tenantId, agentName: SPEND_WITHOUT_AGENT, rootRunId: spend.id, at: spend.at }, [
        'Cost',
      ]);
      return counted.size > 0;
    },

    /**
     * Counts a batch of run events from the event log (one statement for all), then checks the
     * thresholds of each counted event, also of one counted before: its notices may not have been
     * announced when it first came. Answers how many were counted now.
     */
    async countRunEvents(events: RunEventEnvelope[]): Promise<number> {
      const counting = events.flatMap((event) => {
        const amounts = amountsOf(event);
        return amounts.length ? [{ event, amounts, at: new Date(event.at) }] : [];
      });
      if (!counting.length) return 0;
      const counted = await deps.quotas.countEvents(
        counting.map(({ event, amounts, at }) => ({
          runId: event.runId,
          seq: event.seq,
          tenantId: event.tenantId,
          agentName: event.agentName,
          at,
          amounts,
        })),
      );
      for (const { event, amounts, at } of counting) {
        await deps.thresholds?.check(
          { tenantId: event.tenantId, agentName: event.agentName, rootRunId: event.rootRunId, at },
          amounts.map((amount) => amount.metric),
        );
      }
      return counted.size;
    },

    /** Appends an entry for the caller: actor and user come from the caller, never from the request. */
    async recordAudit(
      caller: Caller,
      entry: { action: string; resourceType: string; resourceId: string; details: Record<string, unknown> },
    ): Promise<AuditEntry> {
      const errors = [
        ...(ACTION.test(entry.action) ? [] : [{ path: 'action', message: 'must look like "resource.verb"' }]),
        ...(entry.resourceType.trim() ? [] : [{ path: 'resourceType', message: 'is required' }]),
        ...(entry.resourceId.trim() ? [] : [{ path: 'resourceId', message: 'is required' }]),
      ];
      if (errors.length) throw validationError('the audit entry is not valid', errors);
      return deps.audit.append({
        tenantId: caller.tenantId,
        actor: caller.actor,
        userId: caller.userId ?? null,
        action: entry.action,
        resourceType: entry.resourceType,
        resourceId: entry.resourceId,
        details: entry.details,
      });
    },

    listAudit(caller: Caller, filter: AuditFilter): Promise<AuditEntry[]> {
      return deps.audit.list(caller.tenantId, { ...filter, ...clampPage(filter.skip, filter.take) });
    },
  };
}

export type GovernanceService = ReturnType<typeof createGovernanceService>;
