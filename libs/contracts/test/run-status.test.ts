import { describe, expect, it } from 'vitest';
import { RUN_STATUSES, runPb, runStatusFromProto, runStatusToProto } from '../src/index.js';

describe('run status on the wire', () => {
  it('maps every status to its own enum value and back', () => {
    const values = RUN_STATUSES.map(runStatusToProto);
    expect(new Set(values).size).toBe(RUN_STATUSES.length);
    expect(values).not.toContain(runPb.RunStatus.RUN_STATUS_UNSPECIFIED);
    expect(values.map(runStatusFromProto)).toEqual([...RUN_STATUSES]);
  });

  it('names no status for the unspecified value or one it does not know', () => {
    expect(runStatusFromProto(runPb.RunStatus.RUN_STATUS_UNSPECIFIED)).toBeUndefined();
    expect(runStatusFromProto(99 as runPb.RunStatus)).toBeUndefined();
  });
});
