import { RunStatus } from './generated/hangar/v1/run_executor.js';

/** Run statuses in SPEC's numeric order: the stored `status` and the read view's (Queued 0 … AwaitingApproval 5). */
export const RUN_STATUSES = ['Queued', 'Running', 'Completed', 'Failed', 'Canceled', 'AwaitingApproval'] as const;
export type RunStatusName = (typeof RUN_STATUSES)[number];
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunStatusName> = new Set(['Completed', 'Failed', 'Canceled']);

const TO_PROTO: Record<RunStatusName, RunStatus> = {
  Queued: RunStatus.RUN_STATUS_QUEUED,
  Running: RunStatus.RUN_STATUS_RUNNING,
  Completed: RunStatus.RUN_STATUS_COMPLETED,
  Failed: RunStatus.RUN_STATUS_FAILED,
  Canceled: RunStatus.RUN_STATUS_CANCELED,
  AwaitingApproval: RunStatus.RUN_STATUS_AWAITING_APPROVAL,
};
const FROM_PROTO = new Map(Object.entries(TO_PROTO).map(([name, value]) => [value, name as RunStatusName]));

export const runStatusToProto = (status: RunStatusName): RunStatus => TO_PROTO[status];

/** The status a wire value names; undefined for the unspecified (or an unknown, newer) value. */
export const runStatusFromProto = (status: RunStatus): RunStatusName | undefined => FROM_PROTO.get(status);
