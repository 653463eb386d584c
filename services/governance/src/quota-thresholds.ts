import type { QuotaThresholdNotice } from '@hangar/contracts';
import { quotaWindow } from './quota-window.js';
import type { QuotaMetric, QuotaRepository, QuotaRuleRow } from './quota.repository.js';

export interface ThresholdDeps {
  quotas: Pick<QuotaRepository, 'rules' | 'used' | 'noticed' | 'recordNotice'>;
  /** The rules read after every counted event (a cache); a threshold reached is checked again against the store's. */
  rules?: QuotaRepository['rules'];
  /** `Quotas:ThresholdPercents`. */
  percents: number[];
  timeZone: string;
  /** Hands a notice to webhooks (idempotent by the notice's id, so it comes before the notice is recorded). */
  offer: (notice: QuotaThresholdNotice, context: NoticeContext) => Promise<void>;
  /** The notice was recorded by this call (once per threshold and window): audit it, tell the run's stream. */
  announce: (notice: QuotaThresholdNotice, context: NoticeContext) => Promise<void>;
}

export interface NoticeContext {
  tenantId: string;
  rootRunId: string;
  /** Stable per rule, window and threshold: the webhook id of the notice. */
  noticeKey: string;
}

/**
 * API.md "Quota threshold notices": after usage was counted, each rule covering the event's agent and
 * metric whose usage now reaches a threshold not yet announced in this window announces it (a step
 * over several thresholds announces each). Checked again when an event comes back (at-least-once),
 * so a notice lost to a crash before it was recorded is announced then.
 */
export function createQuotaThresholds(deps: ThresholdDeps) {
  const percents = [...new Set(deps.percents)].filter((percent) => percent > 0).sort((a, b) => a - b);

  return {
    async check(event: { tenantId: string; agentName: string; rootRunId: string; at: Date }, metrics: QuotaMetric[]) {
      if (!percents.length || !metrics.length) return;
      const rules = deps.rules ?? deps.quotas.rules;
      for (const known of await rules(event.tenantId, event.agentName)) {
        if (!metrics.includes(known.metric)) continue;
        let progress = await progressOf(event, known);
        if (!progress.reached.length) continue;
        if (deps.rules) {
          // A notice is kept once per rule, window and threshold: the rule as stored now decides, not a copy a change outdated.
          const rule = (await deps.quotas.rules(event.tenantId, event.agentName)).find((each) => each.name === known.name);
          if (!rule || !metrics.includes(rule.metric)) continue;
          progress = await progressOf(event, rule);
          if (!progress.reached.length) continue;
        }
        const { rule, window, used, reached } = progress;
        const noticed = new Set(await deps.quotas.noticed(event.tenantId, rule.name, window.start));
        for (const percent of reached.filter((each) => !noticed.has(each))) {
          const notice = { quota: rule.name, percent, limit: rule.limit, used, resetsAt: window.end.toISOString() };
          const context = {
            tenantId: event.tenantId,
            rootRunId: event.rootRunId,
            noticeKey: `${event.tenantId}:${rule.name}:${window.start.toISOString()}:${percent}`,
          };
          await deps.offer(notice, context);
          if (await deps.quotas.recordNotice(event.tenantId, rule.name, window.start, percent)) await deps.announce(notice, context);
        }
      }
    },
  };

  /** How much of `rule`'s current window is used, and which thresholds that reaches. */
  async function progressOf(event: { tenantId: string; at: Date }, rule: QuotaRuleRow) {
    const window = quotaWindow(rule.period, deps.timeZone, event.at);
    const used = await deps.quotas.used(event.tenantId, rule.metric, rule.agentName, window.start, window.end);
    return { rule, window, used, reached: percents.filter((percent) => used >= (rule.limit * percent) / 100) };
  }
}

export type QuotaThresholds = ReturnType<typeof createQuotaThresholds>;
