import { retentionPb as pb } from '@hangar/contracts';
import type { Caller, CallerContext } from '@hangar/platform';
import type { EffectivePolicy, RetentionService, RetentionSource } from './retention.service.js';

const SOURCE: Record<RetentionSource, pb.RetentionSource> = {
  Stored: pb.RetentionSource.RETENTION_SOURCE_STORED,
  Configuration: pb.RetentionSource.RETENTION_SOURCE_CONFIGURATION,
  Default: pb.RetentionSource.RETENTION_SOURCE_DEFAULT,
};

const policyToProto = (policy: EffectivePolicy): pb.RetentionPolicy => ({
  target: policy.target,
  maxAgeMs: policy.maxAgeMs ?? undefined,
  archive: policy.archive,
  source: SOURCE[policy.source],
  enabled: policy.enabled,
});

/** gRPC ↔ retention policies; translation only. */
export function retentionPolicyGrpc(
  retention: RetentionService,
  resealContent: (caller: Caller) => Promise<Array<{ service: string; resealed: number; error?: string }>>,
): pb.RetentionPolicyServiceImplementation<CallerContext> {
  return {
    async resealContent(_, { caller }) {
      return { results: await resealContent(caller) };
    },
    async listRetentionPolicies() {
      return { policies: (await retention.policies()).map(policyToProto) };
    },
    async putRetentionPolicy(request, { caller }) {
      const { policy, created } = await retention.put(caller, request.target, {
        maxAgeMs: request.maxAgeMs ?? null,
        archive: request.archive,
      });
      return { policy: policyToProto(policy), created };
    },
    async deleteRetentionPolicy({ target }, { caller }) {
      await retention.delete(caller, target);
      return {};
    },
    async runRetention() {
      return { results: await retention.run() };
    },
  };
}
