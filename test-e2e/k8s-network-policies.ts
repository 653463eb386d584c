/**
 * Whether Kubernetes NetworkPolicies let one endpoint reach another (the rules of
 * networking.k8s.io/v1 for the features Hangar's manifests use): a pod is isolated for a direction
 * once any policy of that type selects it, and then needs a rule allowing the peer and the port.
 */

type Labels = Record<string, string>;
interface Selector {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}
interface Peer {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: { cidr: string };
}
interface Rule {
  from?: Peer[];
  to?: Peer[];
  ports?: { port?: number; protocol?: string }[];
}
export interface NetworkPolicy {
  metadata: { name: string; namespace: string };
  spec: { podSelector: Selector; policyTypes: ('Ingress' | 'Egress')[]; ingress?: Rule[]; egress?: Rule[] };
}

/** A pod (its namespace's labels are just its name), or an address outside the cluster. */
export type Endpoint = { namespace: string; labels: Labels } | { external: true };

export function selects(selector: Selector, labels: Labels): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  const byExpressions = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === 'In') return values.includes(labels[key]);
    if (operator === 'NotIn') return !values.includes(labels[key]);
    return key in labels === (operator === 'Exists');
  });
  return byLabels && byExpressions;
}

function peerMatches(peer: Peer, endpoint: Endpoint, policyNamespace: string): boolean {
  if ('external' in endpoint) return peer.ipBlock !== undefined;
  if (peer.ipBlock) return false;
  const namespaceLabels = { 'kubernetes.io/metadata.name': endpoint.namespace };
  const inNamespace = peer.namespaceSelector ? selects(peer.namespaceSelector, namespaceLabels) : endpoint.namespace === policyNamespace;
  return inNamespace && (!peer.podSelector || selects(peer.podSelector, endpoint.labels));
}

function allowedBy(policies: NetworkPolicy[], type: 'Ingress' | 'Egress', pod: Endpoint, peer: Endpoint, port: number, protocol: string) {
  if ('external' in pod) return true;
  const isolating = policies.filter(
    (policy) =>
      policy.metadata.namespace === pod.namespace && policy.spec.policyTypes.includes(type) && selects(policy.spec.podSelector, pod.labels),
  );
  if (isolating.length === 0) return true;
  return isolating.some((policy) =>
    ((type === 'Ingress' ? policy.spec.ingress : policy.spec.egress) ?? []).some((rule) => {
      const peers = type === 'Ingress' ? rule.from : rule.to;
      const peerAllowed = !peers?.length || peers.some((candidate) => peerMatches(candidate, peer, policy.metadata.namespace));
      const portAllowed =
        !rule.ports?.length ||
        rule.ports.some((entry) => (entry.port === undefined || entry.port === port) && (entry.protocol ?? 'TCP') === protocol);
      return peerAllowed && portAllowed;
    }),
  );
}

/** Whether `from` may open a connection to `to` on `port`: `from`'s egress and `to`'s ingress both allow it. */
export function reaches(policies: NetworkPolicy[], from: Endpoint, to: Endpoint, port: number, protocol = 'TCP'): boolean {
  return allowedBy(policies, 'Egress', from, to, port, protocol) && allowedBy(policies, 'Ingress', to, from, port, protocol);
}
