import { z } from 'zod';

/** API.md "Quota threshold notices": a rule's usage crossed one of `Quotas:ThresholdPercents` in its window. */
export const QuotaThresholdNoticeSchema = z.object({
  quota: z.string(),
  percent: z.number(),
  limit: z.number(),
  used: z.number(),
  resetsAt: z.string(),
});

export type QuotaThresholdNotice = z.infer<typeof QuotaThresholdNoticeSchema>;

/**
 * Pub/sub channel on which governance publishes a notice for the run tree whose usage crossed it
 * (with `Quotas:PublishThresholdToRunStream`); a gateway streaming that run listens.
 */
export const quotaNoticeChannel = (rootRunId: string) => `quota-notice:${rootRunId}`;
