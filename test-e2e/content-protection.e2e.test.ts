import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { allInOneModules } from '@hangar/all-in-one';
import {
  dropSchemas,
  eventually,
  httpRequest,
  spawnAllInOne,
  startHangar,
  startMockOpenAI,
  TEST_POSTGRES_URL,
  uniqueSchemaPrefix,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * API.md "Content protection" on PostgreSQL: with ContentProtection:Enabled, a canary sent in a run,
 * a session, a score comment, an approval's arguments, an attachment's name and an idempotent
 * response, a workflow run’s input, outputs, question and answer is nowhere in a pg_dump of Hangar's schemas, while the API shows it as it was sent.
 */

const CANARY = `canary${randomBytes(6).toString('hex')}`;
let hangar: HangarUnderTest;
let mock: MockOpenAI;
const acme = { 'x-hangar-tenant': 'acme' };

beforeAll(async () => {
  mock = await startMockOpenAI();
  mock.script('echo', [{ text: `you said ${CANARY}` }]);
  mock.script('drafts', () => ({ text: `drafted ${CANARY}` }));
  mock.script('asks', (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? { text: 'ok' }
      : { toolCall: { name: 'clock', args: { timeZone: CANARY } } },
  );
  hangar = await startHangar({
    engine: 'postgres',
    modules: allInOneModules(),
    overrides: {
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      Approvals: { RequiredTools: ['clock'] },
      ContentProtection: { Enabled: true, ActiveKeyId: 'k1', Keys: { k1: 'Hangar:ContentKeys:k1' } },
      Hangar: { ContentKeys: { k1: randomBytes(32).toString('base64') } },
    },
  });
  for (const [name, model, tools] of [
    ['echo', 'echo', []],
    ['asks', 'asks', ['clock']],
    ['drafter', 'drafts', []],
  ] as const) {
    const created = await hangar.request('POST', '/api/agents', {
      body: { name, model: { provider: 'mock', model }, tools },
      headers: acme,
    });
    expect(created.status, created.text).toBe(201);
  }
});

afterAll(async () => {
  await hangar?.stop();
  await mock?.close();
});

describe('content protection', () => {
  it('leaves no plaintext of a protected column in a dump of the database, and shows every value through the API', async () => {
    const run = await hangar.request('POST', '/api/agents/echo/run', {
      body: { message: `remember ${CANARY}`, sessionId: 'protected' },
      headers: { ...acme, 'idempotency-key': 'protected-run' },
    });
    expect(run.status, run.text).toBe(200);
    expect(run.body.output.text).toContain(CANARY);
    const scored = await hangar.request('POST', `/api/runs/${run.body.runId}/feedback`, {
      body: { value: 1, comment: `because ${CANARY}` },
      headers: acme,
    });
    expect(scored.status, scored.text).toBe(200);
    const form = new FormData();
    form.append('file', new Blob(['bytes'], { type: 'text/plain' }), `${CANARY}.txt`);
    const attachment = await hangar.request('POST', '/api/attachments?sessionId=protected', { headers: acme, rawBody: form as never });
    expect(attachment.status, attachment.text).toBe(201);
    const asked = await hangar.request('POST', '/api/agents/asks/run', {
      body: { message: 'time?' },
      headers: { ...acme, prefer: 'respond-async' },
    });
    const approvals = await eventually(async () => {
      const listed = (await hangar.request('GET', `/api/runs/${asked.body.runId}/approvals`, { headers: acme })).body;
      return listed.length ? listed : undefined;
    }, 'the approval');

    // The API shows every value as it was given.
    expect((await hangar.request('GET', '/api/sessions/protected', { headers: acme })).text).toContain(CANARY);
    expect((await hangar.request('GET', `/api/runs/${run.body.runId}/input`, { headers: acme })).text).toContain(CANARY);
    expect((await hangar.request('GET', `/api/runs/${run.body.runId}/events`, { headers: acme })).text).toContain(CANARY);
    expect((await hangar.request('GET', `/api/runs/${run.body.runId}/feedback`, { headers: acme })).text).toContain(CANARY);
    expect((await hangar.request('GET', '/api/attachments?sessionId=protected', { headers: acme })).text).toContain(CANARY);
    expect(JSON.stringify(approvals)).toContain(CANARY);
    const replayed = await hangar.request('POST', '/api/agents/echo/run', {
      body: { message: `remember ${CANARY}`, sessionId: 'protected' },
      headers: { ...acme, 'idempotency-key': 'protected-run' },
    });
    expect([replayed.headers.get('idempotent-replayed'), replayed.body.output.text]).toEqual(['true', run.body.output.text]);

    // A workflow run: its input, its steps' outputs and checkpoints, a question and its answer.
    const workflow = await hangar.request('PUT', '/api/workflows/protected-flow', {
      body: {
        steps: [
          { id: 'draft', kind: 'agent', agent: 'drafter' },
          { id: 'review', kind: 'input', prompt: 'Publish?' },
        ],
        edges: [{ from: 'draft', to: 'review' }],
      },
      headers: acme,
    });
    expect(workflow.status, workflow.text).toBe(201);
    const { workflowRunId } = (
      await hangar.request('POST', '/api/workflows/protected-flow/run', { body: { input: `plan ${CANARY}` }, headers: acme })
    ).body;
    const [question] = await eventually(async () => {
      const listed = (await hangar.request('GET', `/api/workflow-runs/${workflowRunId}/requests`, { headers: acme })).body;
      return listed.length ? listed : undefined;
    }, 'the workflow question');
    expect(question.prompt).toContain(CANARY);
    await hangar.request('POST', `/api/workflow-runs/${workflowRunId}/requests/${question.id}`, {
      body: { answer: `yes ${CANARY}` },
      headers: acme,
    });
    const completed = await eventually(async () => {
      const found = (await hangar.request('GET', `/api/workflow-runs/${workflowRunId}`, { headers: acme })).body;
      return found.status === 'Completed' ? found : undefined;
    }, 'the workflow run');
    expect([completed.input, completed.output, completed.outputs.draft]).toEqual([`plan ${CANARY}`, `yes ${CANARY}`, `drafted ${CANARY}`]);
    expect((await hangar.request('GET', `/api/workflow-runs/${workflowRunId}/checkpoints`, { headers: acme })).text).toContain(CANARY);

    const decided = await hangar.request('POST', `/api/runs/${asked.body.runId}/approvals/${approvals[0].id}`, {
      body: { approved: false },
      headers: acme,
    });
    expect(decided.status).toBe(200);
    const dump = execFileSync('pg_dump', ['--dbname', TEST_POSTGRES_URL, '--schema', `${hangar.schemaPrefix}_*`, '--data-only'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    expect(dump).toContain('hgc1.k1.');
    const leaks = dump.split('\n').filter((line) => line.includes(CANARY));
    expect(leaks).toEqual([]);
  });
});

describe('content key rotation', () => {
  const keys = { k1: randomBytes(32).toString('base64'), k2: randomBytes(32).toString('base64'), k3: randomBytes(32).toString('base64') };
  const prefix = uniqueSchemaPrefix();
  const SECRET = `rotated${randomBytes(6).toString('hex')}`;
  /** A Hangar on the same schemas, sealing with `active` and reading the `readable` keys. */
  const startWith = (active: keyof typeof keys, readable: Array<keyof typeof keys>) =>
    startHangar({
      engine: 'postgres',
      schemaPrefix: prefix,
      modules: allInOneModules(),
      overrides: {
        Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
        Tenancy: { Enabled: true, AllowHeaderResolution: true },
        ContentProtection: {
          Enabled: true,
          ActiveKeyId: active,
          Keys: Object.fromEntries(readable.map((id) => [id, `Hangar:ContentKeys:${id}`])),
        },
        Hangar: { ContentKeys: Object.fromEntries(readable.map((id) => [id, keys[id]])) },
      },
    });
  const dump = () =>
    execFileSync('pg_dump', ['--dbname', TEST_POSTGRES_URL, '--schema', `${prefix}_*`, '--data-only'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
  afterAll(() => dropSchemas(prefix));

  it('keeps rows sealed with an older key readable, moves them to the active key on request, and names a key it does not have', async () => {
    const first = await startWith('k1', ['k1']);
    try {
      expect(
        (await first.request('POST', '/api/agents', { body: { name: 'echo', model: { provider: 'mock', model: 'echo' } }, headers: acme }))
          .status,
      ).toBe(201);
      const run = await first.request('POST', '/api/agents/echo/run', {
        body: { message: SECRET, sessionId: 'rotated' },
        headers: { ...acme, 'idempotency-key': 'rotated-run' },
      });
      expect(run.status, run.text).toBe(200);
    } finally {
      await first.stop();
    }
    expect(dump()).not.toContain('hgc1.k2.');

    const second = await startWith('k2', ['k1', 'k2']);
    try {
      expect((await second.request('GET', '/api/sessions/rotated', { headers: acme })).text).toContain(SECRET);
      const resealed = await second.request('POST', '/api/content-protection/reseal');
      expect(resealed.status, resealed.text).toBe(200);
      expect(
        resealed.body.results.every((result: any) => result.error === undefined),
        resealed.text,
      ).toBe(true);
      const byService = Object.fromEntries(resealed.body.results.map((result: any) => [result.service, result]));
      expect(byService.Session.resealed).toBeGreaterThan(0);
      expect(byService.RunExecutor.resealed).toBeGreaterThan(0);
      expect(byService.Governance.resealed).toBeGreaterThan(0);
      expect(resealed.body.results.every((result: any) => result.error === undefined)).toBe(true);
      const after = dump();
      expect(after).toContain('hgc1.k2.');
      expect(after).not.toContain('hgc1.k1.');
      expect(after).not.toContain(SECRET);
    } finally {
      await second.stop();
    }

    const third = await startWith('k2', ['k2']);
    try {
      expect((await third.request('GET', '/api/sessions/rotated', { headers: acme })).text).toContain(SECRET);
    } finally {
      await third.stop();
    }

    const stranger = await startWith('k3', ['k3']);
    try {
      const refused = await stranger.request('GET', '/api/sessions/rotated', { headers: acme });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ errorType: 'content_key_missing', detail: expect.stringContaining('key "k2"') });
      expect(refused.text).not.toContain(SECRET);
    } finally {
      await stranger.stop();
    }
  }, 120_000);
});

describe('content protection on the embedded store', () => {
  it('leaves no plaintext of a protected column in any file of the PGlite data directory', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hangar-sealed-'));
    const secret = `embedded${randomBytes(6).toString('hex')}`;
    const hangar = await spawnAllInOne({
      dataDir,
      env: {
        HANGAR__Providers__mock__Kind: 'OpenAICompatible',
        HANGAR__Providers__mock__Endpoint: mock.url,
        HANGAR__ContentProtection__Enabled: 'true',
        HANGAR__ContentProtection__ActiveKeyId: 'k1',
        HANGAR__ContentProtection__Keys__k1: 'Hangar:ContentKeys:k1',
        HANGAR__Hangar__ContentKeys__k1: randomBytes(32).toString('base64'),
      },
    });
    try {
      const request = (method: string, path: string, options: Parameters<typeof httpRequest>[3] = {}) =>
        httpRequest(hangar.url, method, path, options);
      expect((await request('POST', '/api/agents', { body: { name: 'echo', model: { provider: 'mock', model: 'echo' } } })).status).toBe(
        201,
      );
      const run = await request('POST', '/api/agents/echo/run', {
        body: { message: secret, sessionId: 'embedded' },
        headers: { 'idempotency-key': 'embedded-run' },
      });
      expect(run.status, run.text).toBe(200);
      expect((await request('POST', `/api/runs/${run.body.runId}/feedback`, { body: { value: 1, comment: secret } })).status).toBe(200);
      expect((await request('GET', '/api/sessions/embedded')).text).toContain(secret);
    } finally {
      await hangar.stop();
    }
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory() ? files(path) : [path];
      });
    const holding = files(dataDir).filter((path) => readFileSync(path).includes(secret));
    rmSync(dataDir, { recursive: true, force: true });
    expect(holding).toEqual([]);
  }, 90_000);
});
