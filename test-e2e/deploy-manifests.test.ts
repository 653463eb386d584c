import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allInOneModules } from '@hangar/all-in-one';
import {
  ConfigSchema,
  loadConfig,
  maskedConfiguration,
  SERVICE_NAMES,
  settingsNotYetEffective,
  treeFromEnvironment,
  type HangarConfig,
} from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { readsKey, schemaKeyPaths } from '../libs/platform/test/config-references.js';
import { reaches, selects, type Endpoint, type NetworkPolicy } from './k8s-network-policies.js';

/**
 * `kubectl kustomize` of the base and of every overlay must give manifests Kubernetes accepts
 * (each document against the API schema of its kind) and that run Hangar: every process the code
 * has, each with a configuration Hangar loads, reaching the services and engines the code uses.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const K8S = `${ROOT}deploy/k8s/`;
const OVERLAYS = readdirSync(`${K8S}overlays`);
const kebab = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();

/** Created by hand in production (hangar-secrets.env.example), never rendered. */
const EXTERNAL_SECRET = 'hangar-secrets';
const SECRET_TEMPLATE = `${K8S}overlays/production/hangar-secrets.env.example`;

function render(path: string): any[] {
  let text: string;
  try {
    text = execFileSync('kubectl', ['kustomize', path], { encoding: 'utf8' });
  } catch (error) {
    throw new Error(`kubectl kustomize ${path} failed (kubectl is needed for this test): ${(error as Error).message}`);
  }
  return parseAllDocuments(text).map((document) => document.toJS());
}

const envFile = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.trim() && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

const PATHS = ['base', ...OVERLAYS.map((name) => `overlays/${name}`)];
const rendered = Object.fromEntries(PATHS.map((path) => [path, render(`${K8S}${path}`)]));
const overlays = OVERLAYS.map((name) => [name, rendered[`overlays/${name}`]] as const);

const workloads = (documents: any[]) => documents.filter((document) => ['Deployment', 'StatefulSet', 'Job'].includes(document.kind));
const hangarWorkloads = (documents: any[]) =>
  workloads(documents).filter((document) => document.metadata.labels?.['app.kubernetes.io/part-of'] === 'hangar');
const podSpec = (workload: any) => workload.spec.template.spec;
const containersOf = (workload: any): any[] => [...(podSpec(workload).initContainers ?? []), ...podSpec(workload).containers];
const envValue = (container: any, name: string) => container.env?.find((entry: any) => entry.name === name)?.value;
const processOf = (documents: any[], service: string) =>
  hangarWorkloads(documents).find(
    (workload) => workload.kind === 'Deployment' && envValue(podSpec(workload).containers[0], 'HANGAR_SERVICE') === service,
  );

/** The environment a container gets: its envFrom sources (the production Secret from its template), then its env. */
function environmentOf(documents: any[], container: any): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const [kind, name] = source.configMapRef ? ['ConfigMap', source.configMapRef.name] : ['Secret', source.secretRef.name];
    const found = documents.find((document) => document.kind === kind && document.metadata.name === name);
    if (found?.kind === 'ConfigMap') Object.assign(env, found.data);
    else if (found) for (const [key, value] of Object.entries<string>(found.data)) env[key] = Buffer.from(value, 'base64').toString();
    else if (name === EXTERNAL_SECRET) Object.assign(env, envFile(readFileSync(SECRET_TEMPLATE, 'utf8')));
    else throw new Error(`${kind} ${name} is referenced but not rendered`);
  }
  for (const entry of container.env ?? []) if (entry.value !== undefined) env[entry.name] = entry.value;
  return env;
}

const configOf = (documents: any[], container: any): HangarConfig => loadConfig({ env: environmentOf(documents, container) });

/** The Kubernetes API model of a document's apiVersion and kind (kubernetes-models: `v1`, `apps/v1`, …). */
async function modelOf(document: any) {
  const models = await import(`kubernetes-models/${document.apiVersion}`).catch(() => ({}));
  return (models as Record<string, new (data: unknown) => { validate(): void }>)[document.kind];
}

/** Keys the engines read whose default is unset (null, no brokers): unset, a process falls back to an embedded, in-process engine. */
const ENGINE_KEYS = (() => {
  const source = readFileSync(`${ROOT}libs/platform/src/runtime/engines.ts`, 'utf8');
  const defaults = ConfigSchema.parse({});
  const valueAt = (config: unknown, key: string) => key.split(':').reduce<any>((node, segment) => node?.[segment], config);
  return schemaKeyPaths(ConfigSchema).filter((key) => {
    const value = valueAt(defaults, key);
    return readsKey(source, key.split(':')) && (value === null || (Array.isArray(value) && value.length === 0));
  });
})();

describe.each(PATHS)('kubectl kustomize deploy/k8s/%s', (path) => {
  it('gives documents that each validate against the Kubernetes API schema of its kind, all in the hangar namespace', async () => {
    const documents = rendered[path];
    expect(documents.length).toBeGreaterThan(0);
    for (const document of documents) {
      const Model = await modelOf(document);
      expect(Model, `${document.apiVersion} ${document.kind}`).toBeDefined();
      expect(() => new Model(document).validate(), `${document.kind} ${document.metadata.name}`).not.toThrow();
      if (document.kind !== 'Namespace') expect(document.metadata.namespace, `${document.kind} ${document.metadata.name}`).toBe('hangar');
    }
  });
});

/** Whether configuration `data` holds a value Hangar masks as a secret (a token, a key, a password in a URL…). */
const holdsSecrets = (data: Record<string, string>) => {
  const tree = treeFromEnvironment(data);
  return JSON.stringify(maskedConfiguration(tree)) !== JSON.stringify(tree);
};

describe('the base', () => {
  it('holds a configuration Hangar accepts once the Secret adds a credential, and no secret itself', () => {
    const configMap = rendered.base.find((document) => document.kind === 'ConfigMap');
    expect(() =>
      loadConfig({ env: { ...configMap.data, HANGAR__Hangar__Api__AuthToken: 'secret-token-from-k8s-0123456789' } }),
    ).not.toThrow();
    expect(holdsSecrets(configMap.data)).toBe(false);
  });
});

describe.each(overlays)('the %s overlay', (_name, documents) => {
  it('runs every process of the code, one Deployment each, and the migration Job', () => {
    const modules = allInOneModules().map((module) => kebab(module.name));
    expect(modules.sort()).toEqual([...SERVICE_NAMES, 'Gateway'].map(kebab).sort());
    for (const service of modules) {
      const deployment = processOf(documents, service);
      expect(deployment, service).toBeDefined();
      expect(deployment.metadata.name).toBe(service);
    }
    const job = hangarWorkloads(documents).find((workload) => workload.kind === 'Job');
    expect(envValue(podSpec(job).containers[0], 'HANGAR_SERVICE')).toBe('migrate');
    for (const workload of hangarWorkloads(documents))
      for (const container of containersOf(workload)) {
        const entry = envValue(container, 'HANGAR_SERVICE');
        expect(existsSync(`${ROOT}services/${entry}/src/main.ts`), `${workload.metadata.name}: services/${entry}/src/main.ts`).toBe(true);
      }
  });

  it('gives every Hangar container a configuration Hangar loads, with every engine the code can use configured', () => {
    expect(ENGINE_KEYS).toEqual(expect.arrayContaining(['Stores:Postgres:ConnectionString', 'Redis:ConnectionString', 'Kafka:Brokers']));
    for (const workload of hangarWorkloads(documents))
      for (const container of containersOf(workload)) {
        const config = configOf(documents, container);
        for (const key of ENGINE_KEYS) {
          const value = key.split(':').reduce<any>((node, segment) => node[segment], config);
          expect(value?.length, `${workload.metadata.name}/${container.name}: ${key}`).toBeGreaterThan(0);
        }
        // The Job migrates; nothing else does.
        expect(config.Stores.Postgres.AutoApplyMigrations, container.name).toBe(false);
        // Every key set does something (a key whose feature is not built yet would only warn at start).
        expect(settingsNotYetEffective(config), container.name).toEqual([]);
      }
  });

  it('keeps secrets in the Secret: no ConfigMap holds a value Hangar masks as a secret', () => {
    for (const configMap of documents.filter((document) => document.kind === 'ConfigMap'))
      expect(holdsSecrets(configMap.data), configMap.metadata.name).toBe(false);
  });

  it('lets the gateway be reached from outside with a credential, and gives each configured provider its key', () => {
    const gateway = processOf(documents, 'gateway');
    const config = configOf(documents, podSpec(gateway).containers[0]);
    expect([config.Gateway.Host, config.Hangar.Api.AllowRemoteAccess]).toEqual(['0.0.0.0', true]);
    expect(config.Hangar.Api.AuthToken).toBeTruthy();
    const ports = podSpec(gateway).containers[0].ports.map((port: any) => port.containerPort);
    expect(ports).toContain(config.Gateway.Port);
    const service = documents.find(
      (document) => document.kind === 'Service' && selects({ matchLabels: document.spec.selector }, gateway.spec.template.metadata.labels),
    );
    expect(service.spec.ports[0].targetPort).toBe('http');
    for (const [provider, settings] of Object.entries(config.Providers))
      if (settings.Kind !== 'Demo') expect(settings.ApiKey, `Providers:${provider}:ApiKey`).toBeTruthy();
  });

  it('reaches every service a process calls at its configured address, through a Service to the pods that listen there', () => {
    const policies = documents.filter((document) => document.kind === 'NetworkPolicy') as NetworkPolicy[];
    for (const module of allInOneModules()) {
      const caller = processOf(documents, kebab(module.name));
      const config = configOf(documents, podSpec(caller).containers[0]);
      for (const dependency of module.dependsOn) {
        const [host, port] = config.Services[dependency].Address!.split(':');
        const callee = processOf(documents, kebab(dependency));
        const service = documents.find((document) => document.kind === 'Service' && document.metadata.name === host);
        expect(service, `${module.name} → ${dependency}: Service ${host}`).toBeDefined();
        expect(selects({ matchLabels: service.spec.selector }, callee.spec.template.metadata.labels)).toBe(true);
        const servicePort = service.spec.ports.find((entry: any) => entry.port === Number(port));
        const listening = configOf(documents, podSpec(callee).containers[0]).Services[dependency];
        const containerPort = podSpec(callee).containers[0].ports.find((entry: any) => entry.name === servicePort.targetPort);
        expect([listening.Host, containerPort.containerPort], `${dependency} listens where its Service sends`).toEqual([
          '0.0.0.0',
          listening.Port,
        ]);
        const pod = (workload: any): Endpoint => ({ namespace: 'hangar', labels: workload.spec.template.metadata.labels });
        expect(
          reaches(policies, pod(caller), pod(callee), listening.Port),
          `${module.name} → ${dependency} through the NetworkPolicies`,
        ).toBe(true);
      }
    }
  });

  it('admits through the NetworkPolicies only what Hangar needs', () => {
    const policies = documents.filter((document) => document.kind === 'NetworkPolicy') as NetworkPolicy[];
    const pod = (service: string): Endpoint => ({
      namespace: 'hangar',
      labels: processOf(documents, service).spec.template.metadata.labels,
    });
    const job = hangarWorkloads(documents).find((workload) => workload.kind === 'Job');
    const migrate: Endpoint = { namespace: 'hangar', labels: job.spec.template.metadata.labels };
    const outside: Endpoint = { external: true };
    const elsewhere: Endpoint = { namespace: 'monitoring', labels: { app: 'prometheus' } };
    const services = SERVICE_NAMES.map(kebab);
    const engines = workloads(documents).filter((workload) => workload.metadata.labels['app.kubernetes.io/component'] === 'dev-engine');
    const engineEndpoints: Endpoint[] = engines.length
      ? engines.map((engine) => ({ namespace: 'hangar', labels: engine.spec.template.metadata.labels }))
      : [outside];

    expect(reaches(policies, outside, pod('gateway'), 8080)).toBe(true);
    for (const service of services) {
      expect(reaches(policies, outside, pod(service), 50051), `outside → ${service}`).toBe(false);
      expect(reaches(policies, elsewhere, pod(service), 50051), `another namespace → ${service}`).toBe(false);
      expect(reaches(policies, migrate, pod(service), 50051), `migration Job → ${service}`).toBe(false);
      expect(reaches(policies, elsewhere, pod(service), 9464), `Prometheus → ${service} /metrics`).toBe(true);
    }
    for (const from of [...services.map(pod), pod('gateway'), migrate]) {
      expect(reaches(policies, from, outside, 53, 'UDP')).toBe(true);
      expect(engineEndpoints.some((engine) => reaches(policies, from, engine, 5432))).toBe(true);
      expect(engineEndpoints.some((engine) => reaches(policies, from, engine, 6379))).toBe(true);
      expect(engineEndpoints.some((engine) => reaches(policies, from, engine, 9092))).toBe(true);
    }
    // Model providers (runs, embeddings), webhook targets, a JWKS: HTTPS only, and only from the processes that call out.
    for (const service of ['run-executor', 'governance', 'gateway', 'knowledge'])
      expect(reaches(policies, pod(service), outside, 443), service).toBe(true);
    for (const service of ['session', 'attachment', 'skill', 'agent-registry'])
      expect(reaches(policies, pod(service), outside, 443), service).toBe(false);
    expect(reaches(policies, pod('run-executor'), outside, 80)).toBe(false);
    expect(reaches(policies, migrate, outside, 443)).toBe(false);
  });

  it('runs every container non-root, read-only, without capabilities, with requests and limits', () => {
    for (const workload of workloads(documents)) {
      const pod = podSpec(workload);
      const hangar = workload.metadata.labels?.['app.kubernetes.io/part-of'] === 'hangar';
      expect(pod.securityContext, workload.metadata.name).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.automountServiceAccountToken, workload.metadata.name).toBe(false);
      if (hangar) expect(pod.securityContext).toMatchObject({ runAsUser: 1000, runAsGroup: 1000 });
      for (const container of containersOf(workload)) {
        const where = `${workload.metadata.name}/${container.name}`;
        expect(container.securityContext, where).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
        if (hangar) {
          expect(container.securityContext.readOnlyRootFilesystem, where).toBe(true);
          const tmp = container.volumeMounts?.find((mount: any) => mount.mountPath === '/tmp');
          expect(pod.volumes.find((volume: any) => volume.name === tmp?.name)?.emptyDir, where).toBeDefined();
        }
        for (const kind of ['requests', 'limits'])
          expect(Object.keys(container.resources[kind]).sort(), `${where} ${kind}`).toEqual(['cpu', 'memory']);
      }
    }
  });

  it('probes each process, drains on SIGTERM within the grace period, and does not restart a draining pod', () => {
    for (const deployment of hangarWorkloads(documents).filter((workload) => workload.kind === 'Deployment')) {
      const container = podSpec(deployment).containers[0];
      const config = configOf(documents, container);
      const where = deployment.metadata.name;
      expect(container.startupProbe && container.readinessProbe && container.livenessProbe, where).toBeTruthy();
      expect(config.Drain.Enabled, where).toBe(true);
      expect(podSpec(deployment).terminationGracePeriodSeconds * 1000, where).toBeGreaterThan(config.Drain.Timeout);
      // Readiness reports a drain; liveness must not, or the kubelet restarts the pod mid-drain.
      expect(container.livenessProbe.grpc, where).toBeUndefined();
      if (where === 'gateway')
        expect([container.readinessProbe.httpGet.path, container.livenessProbe.httpGet.path]).toEqual(['/readyz', '/healthz']);
      else expect(container.readinessProbe.grpc.port).toBe(config.Services[SERVICE_NAMES.find((name) => kebab(name) === where)!].Port);
    }
  });

  it('starts a service only once the migrations are applied; the gateway keeps no data and does not wait', () => {
    for (const deployment of hangarWorkloads(documents).filter((workload) => workload.kind === 'Deployment')) {
      const [init, ...others] = podSpec(deployment).initContainers ?? [];
      if (deployment.metadata.name === 'gateway') {
        expect(init).toBeUndefined();
        continue;
      }
      expect(others).toEqual([]);
      expect([envValue(init, 'HANGAR_SERVICE'), envValue(init, 'HANGAR_MIGRATE')]).toEqual(['migrate', 'wait']);
      expect(init.image).toBe(podSpec(deployment).containers[0].image);
      expect(init.envFrom).toEqual(podSpec(deployment).containers[0].envFrom);
    }
  });

  it('keeps every stateless process up through a voluntary disruption and lets it scale', () => {
    for (const deployment of hangarWorkloads(documents).filter((workload) => workload.kind === 'Deployment')) {
      const where = deployment.metadata.name;
      const labels = deployment.spec.template.metadata.labels;
      const budget = documents.find((document) => document.kind === 'PodDisruptionBudget' && selects(document.spec.selector, labels));
      expect(budget?.spec.maxUnavailable, where).toBe(1);
      const autoscaler = documents.find(
        (document) => document.kind === 'HorizontalPodAutoscaler' && document.spec.scaleTargetRef.name === where,
      );
      expect(autoscaler?.spec.minReplicas, where).toBeGreaterThanOrEqual(1);
      // The autoscaler owns the count; a replicas field would reset it on every apply.
      expect(deployment.spec.replicas, where).toBeUndefined();
    }
  });
});

describe('the production overlay', () => {
  const documents = rendered['overlays/production'];

  it('expects the Secret from its template rather than generating one, and uses an image of a registry', () => {
    expect(documents.filter((document) => document.kind === 'Secret')).toEqual([]);
    for (const workload of hangarWorkloads(documents))
      for (const container of containersOf(workload)) expect(container.image, container.name).toMatch(/^[\w.-]+\.[\w.-]+\/.+:.+$/);
  });

  it('serves run streams through the Ingress unbuffered and without a read timeout shorter than an hour', () => {
    const ingress = documents.find((document) => document.kind === 'Ingress');
    expect(ingress.metadata.annotations).toMatchObject({ 'nginx.ingress.kubernetes.io/proxy-buffering': 'off' });
    expect(Number(ingress.metadata.annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(3600);
    expect(ingress.spec.rules[0].http.paths[0].backend.service.name).toBe('gateway');
  });
});
