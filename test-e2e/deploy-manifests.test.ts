import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig, SERVICE_NAMES } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

/** The Kubernetes base must deploy every service with a configuration Hangar accepts. */

const BASE = fileURLToPath(new URL('../deploy/k8s/base/', import.meta.url));
const kustomization = parseAllDocuments(readFileSync(`${BASE}kustomization.yaml`, 'utf8'))[0].toJS();
const documents: any[] = kustomization.resources.flatMap((file: string) =>
  parseAllDocuments(readFileSync(`${BASE}${file}`, 'utf8')).map((document) => document.toJS()),
);
const configMap = documents.find((document) => document.kind === 'ConfigMap').data as Record<string, string>;
const kebab = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();

/** The environment a pod of the Deployment gets, with secrets stubbed. */
function podEnvironment(deployment: any): Record<string, string> {
  const container = deployment.spec.template.spec.containers[0];
  const env: Record<string, string> = { ...configMap };
  for (const entry of container.env) {
    env[entry.name] =
      entry.value ??
      (entry.name.includes('Redis')
        ? 'redis://redis:6379'
        : entry.name.includes('ConnectionString')
          ? 'postgres://hangar@db:5432/hangar'
          : 'secret-token-from-k8s-0123456789');
  }
  return env;
}

describe('deploy/k8s/base', () => {
  it('lists only files that exist', () => {
    for (const file of kustomization.resources) expect(existsSync(`${BASE}${file}`), file).toBe(true);
  });

  it.each([...SERVICE_NAMES, 'Gateway'] as const)('deploys %s with a Service and a valid configuration', (name) => {
    const deployment = documents.find((document) => document.kind === 'Deployment' && document.metadata.name === kebab(name));
    const service = documents.find((document) => document.kind === 'Service' && document.metadata.name === kebab(name));
    expect(deployment).toBeDefined();
    expect(service?.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    const config = loadConfig({ env: podEnvironment(deployment) });
    expect(config.Stores.Postgres.ConnectionString).toBeTruthy();
    if (name === 'Gateway') {
      expect(config.Hangar.Api.AllowRemoteAccess).toBe(true);
      expect(config.Hangar.Api.AuthToken).toBeTruthy();
    } else {
      const port = config.Services[name].Port;
      expect(config.Services[name].Address).toBe(`${kebab(name)}:${port}`);
      expect(service.spec.ports[0].port).toBe(port);
    }
  });

  it('gives the run-events producer (RunExecutor) and its consumer (Governance) the same Kafka brokers', () => {
    const brokers = (name: string) => {
      const deployment = documents.find((document) => document.kind === 'Deployment' && document.metadata.name === kebab(name));
      return loadConfig({ env: podEnvironment(deployment) }).Kafka.Brokers;
    };
    expect(brokers('RunExecutor').length).toBeGreaterThan(0);
    expect(brokers('Governance')).toEqual(brokers('RunExecutor'));
  });

  it('drains on SIGTERM within the grace period, and does not restart a draining pod', () => {
    for (const deployment of documents.filter((document) => document.kind === 'Deployment')) {
      const config = loadConfig({ env: podEnvironment(deployment) });
      const pod = deployment.spec.template.spec;
      expect(config.Drain.Enabled, deployment.metadata.name).toBe(true);
      expect(pod.terminationGracePeriodSeconds * 1000, deployment.metadata.name).toBeGreaterThan(config.Drain.Timeout);
      // Readiness reports a drain; liveness must not, or the kubelet restarts the pod mid-drain.
      expect(pod.containers[0].livenessProbe.grpc, deployment.metadata.name).toBeUndefined();
    }
  });
});
