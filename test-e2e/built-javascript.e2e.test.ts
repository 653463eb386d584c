import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort, httpRequest, reflectServer, spawnAllInOne, TEST_BUILD_DIR, type AllInOneProcess } from '@hangar/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';

/**
 * The production JavaScript, what the container image runs: `npm run build` into a directory of its
 * own (the run's test build, which `tools/test-build.ts` makes once for the split projects, where this
 * file runs), then `node <out>/all-in-one/main.js` (no tsx) serves the API and runs an agent, and
 * what the bundles read beside themselves is there (the trial configuration and its compiled code
 * agents, the token counter's worker thread, the .proto files of gRPC reflection).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const api = (method: string, path: string, options?: Parameters<typeof httpRequest>[3]) => httpRequest(hangar.url, method, path, options);

const outDir = TEST_BUILD_DIR;
let hangar: AllInOneProcess;
let registryPort: number;

beforeAll(async () => {
  registryPort = await freePort();
  hangar = await spawnAllInOne({
    entry: join(relative(ROOT, outDir), 'all-in-one/main.js'),
    env: { HANGAR__Services__AgentRegistry__Port: String(registryPort) },
  });
  console.log(`the built all-in-one answered ${Math.round(hangar.startupMs)} ms after its spawn`);
}, 120_000);

afterAll(async () => {
  await hangar?.stop();
});

it('is ready and reports the version of the workspace package.json', async () => {
  expect((await api('GET', '/readyz', { token: null })).status).toBe(200);
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  expect((await api('GET', '/api/meta', { token: null })).body).toMatchObject({ version });
});

it('creates an agent on the offline Demo provider and answers one run as JSON', async () => {
  const created = await api('POST', '/api/agents', { body: { name: 'built', model: { provider: 'demo', model: 'echo' } } });
  expect(created.status, created.text).toBe(201);
  const run = await api('POST', '/api/agents/built/run', {
    body: { message: 'hello from dist' },
    headers: { 'idempotency-key': 'built-1' },
  });
  expect(run.status, run.text).toBe(200);
  expect(run.body).toMatchObject({ status: 'Completed', output: { text: expect.stringContaining('hello from dist') } });
});

it('serves the code agents of the trial configuration, compiled beside the services', async () => {
  expect((await api('GET', '/api/agents')).body.map((agent: { name: string }) => agent.name)).toEqual(
    expect.arrayContaining(['concierge', 'greeter']),
  );
});

it('counts prompt tokens in its worker thread', async () => {
  const estimate = await api('POST', '/api/agents/built/estimate', { body: { message: 'how many tokens is this?' } });
  expect(estimate.status, estimate.text).toBe(200);
  expect(estimate.body.estimatedPromptTokens).toBeGreaterThan(0);
});

it('describes its services through gRPC reflection from the copied .proto files', async () => {
  const { services } = await reflectServer(`127.0.0.1:${registryPort}`);
  expect(services).toContain('hangar.v1.AgentRegistryService');
});

it('stops on SIGTERM with exit code 0', async () => {
  await hangar.stop();
  expect(await hangar.exited).toBe(0);
});

it('imports the client-library instrumentation first in every service bundle, so pg and node-redis load patched', async () => {
  const services = readdirSync(join(ROOT, 'services')).filter((service) => existsSync(join(ROOT, 'services', service, 'src/main.ts')));
  for (const service of services) {
    const bundle = readFileSync(join(outDir, service, 'main.js'), 'utf8');
    // Node's built-ins may come before it (inlined packages import them); no package may. The bundle is
    // minified of whitespace: a statement begins a line or follows a `;` or `}`.
    const imports = bundle.matchAll(/(?:^|[;}])\s*import\s*(?:[\w$*{}\s,]+?\s*from\s*)?["']([^"']+)["'];/gm);
    const firstImport = [...imports].map(([, specifier]) => specifier).find((specifier) => !isBuiltin(specifier));
    expect(firstImport, service).toBe('../instrumentation.js');
  }
  const probe = `await import(${JSON.stringify(join(outDir, 'instrumentation.js'))}); const pg = (await import('pg')).default; console.log(pg.Client.prototype.query.__wrapped === true);`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], { cwd: ROOT });
  expect(stdout.trim()).toBe('true');
});
