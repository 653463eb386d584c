import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { allInOneModules } from '@hangar/all-in-one';
import {
  CONSOLE_SCREENSHOTS,
  chromiumPath,
  eventually,
  startHangar,
  startWebhookReceiver,
  TEST_TOKEN,
  type HangarUnderTest,
  type WebhookReceiver,
} from '@hangar/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The console's Manage pages (one generic page per route group) in this machine's Chromium. */
let hangar: HangarUnderTest;
let receiver: WebhookReceiver;
let browser: Browser;
let page: Page;

const KINDS = [
  'API keys',
  'Webhooks',
  'Skills',
  'Skill script grants',
  'Schedules',
  'Tool servers',
  'Knowledge',
  'Workflows',
  'Eval suites',
  'Experiments',
  'Tenants',
];
const screenshot = (name: string) => page.screenshot({ path: join(CONSOLE_SCREENSHOTS, `${name}.png`), fullPage: true });
const editor = (title: string) => page.getByRole('form', { name: title });
/** Types a JSON body (and a name) into an editor form and saves it. */
async function save(title: string, body: unknown, name?: string) {
  const form = editor(title);
  if (name !== undefined) await form.getByLabel('Name').fill(name);
  await form.getByLabel('Body (JSON)').fill(typeof body === 'string' ? body : JSON.stringify(body));
  await form.getByRole('button', { name: 'Save' }).click();
}

beforeAll(async () => {
  mkdirSync(CONSOLE_SCREENSHOTS, { recursive: true });
  receiver = await startWebhookReceiver();
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Hangar: { WebhookSecrets: { main: `whsec_${Buffer.alloc(32, 7).toString('base64')}` } },
      Webhooks: { AllowPrivateNetworkTargets: true, AllowInsecureHttp: true },
      // A suite run whose case waits for this approval stays running until it is canceled.
      Approvals: { RequiredTools: ['clock'] },
    },
  });
  expect(
    (await hangar.request('POST', '/api/agents', { body: { name: 'echoer', model: { provider: 'demo', model: 'echo' } } })).status,
  ).toBe(201);
  browser = await chromium.launch({ executablePath: await chromiumPath(), args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // A wait fails only when what it waits for never comes: on a loaded 2-core CI (split shape, load
  // average 26 on 2026-11-29) a page's first list took over 10 s to appear.
  page.setDefaultTimeout(30_000);
  // A page load includes Chromium's first start and the bundle; on a loaded 2-core CI it can take longer than one click.
  page.setDefaultNavigationTimeout(60_000);
  await page.goto(`${hangar.url}/console#/manage`);
  await page.getByLabel('Token', { exact: true }).fill(TEST_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Manage' }).waitFor();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await hangar?.stop();
  await receiver?.close();
});

describe('the console’s Manage pages', () => {
  it('list every managed route group, and each one’s page loads without an error', async () => {
    expect(await page.locator('.kinds a').allTextContents()).toEqual(KINDS);
    await screenshot('manage');
    for (const title of KINDS) {
      await page.getByRole('link', { name: title, exact: true }).click();
      await page.getByRole('heading', { name: title, exact: true }).waitFor();
      await page
        .getByText(/^No .* yet\.$/)
        .or(page.getByRole('table', { name: title }))
        .waitFor();
      expect(await page.getByRole('alert').count(), title).toBe(0);
      await page.getByRole('link', { name: '← Manage' }).click();
    }
  });

  it('makes an API key, showing the key once, and revokes it', async () => {
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await save('New API key', { name: 'from-console', role: 'Reader' });
    await expect.poll(() => editor('New API key').getByTestId('answer').textContent()).toMatch(/"key": "/);
    const made = JSON.parse((await editor('New API key').getByTestId('answer').textContent())!);
    expect((await hangar.request('GET', '/api/agents', { headers: { 'x-api-key': made.key }, token: null })).status).toBe(200);
    await expect.poll(() => page.getByRole('table', { name: 'API keys' }).textContent()).toContain('from-console');
    await screenshot('manage-api-keys');
    await page.getByRole('button', { name: `Revoke ${made.id}` }).click();
    await eventually(async () => ((await hangar.request('GET', `/api/api-keys/${made.id}`)).body.revokedAt ? true : undefined), 'revoked');
    expect((await hangar.request('GET', '/api/agents', { headers: { 'x-api-key': made.key }, token: null })).status).toBe(401);
  });

  it('says what is wrong with a body, and creates nothing', async () => {
    await page.getByRole('link', { name: '← Manage' }).click();
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await save('New webhook', '{ "url": ', 'broken');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Not JSON yet');
    await save(
      'New webhook',
      { url: `${receiver.url}/console`, events: ['no.such.event'], secretKey: 'Hangar:WebhookSecrets:main' },
      'refused',
    );
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('events');
    expect((await hangar.request('GET', '/api/webhooks')).body).toEqual([]);
  });

  it('makes a webhook, sends it a test event and shows the delivery, and edits it', async () => {
    await save(
      'New webhook',
      { url: `${receiver.url}/console`, events: ['run.completed'], secretKey: 'Hangar:WebhookSecrets:main' },
      'console-hook',
    );
    await page.getByRole('link', { name: 'console-hook' }).click();
    await page.getByRole('heading', { name: 'console-hook' }).waitFor();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Send a test event: \{"deliveryId":/);
    await eventually(async () => (receiver.to('/console').length === 1 ? true : undefined), 'the test event delivered');
    await page.reload();
    await expect.poll(() => page.getByRole('table', { name: 'Deliveries' }).textContent()).toContain('webhook.test');
    const edit = editor('Edit webhook');
    const body = JSON.parse(await edit.getByLabel('Body (JSON)').inputValue());
    expect(body).toEqual({ url: `${receiver.url}/console`, events: ['run.completed'], headers: {}, enabled: true, description: null });
    await save('Edit webhook', { ...body, secretKey: 'Hangar:WebhookSecrets:main', description: 'edited in the console' });
    await expect.poll(() => page.getByTestId('resource').textContent()).toContain('edited in the console');
    await screenshot('manage-webhook');
  });

  it('runs a schedule now from its page, then deletes it', async () => {
    await page.goto(`${hangar.url}/console#/manage/schedules`);
    await save(
      'New schedule',
      { handlerKey: 'agent-run', cron: '0 7 * * 1-5', payload: { agentName: 'echoer', message: 'hi' } },
      'mornings',
    );
    await page.getByRole('link', { name: 'mornings' }).click();
    await page.getByRole('button', { name: 'Run now' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toMatch(/Run now: \{"runId":"[0-9a-f-]{36}"/);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Schedules', exact: true }).waitFor();
    await page.getByText('No schedule yet.').waitFor();
    expect((await hangar.request('GET', '/api/schedules/mornings')).status).toBe(404);
  });

  it('runs a workflow from its page, and answers its question on the run’s page', async () => {
    await page.goto(`${hangar.url}/console#/manage/workflows`);
    const steps = [
      { id: 'draft', kind: 'agent', agent: 'echoer' },
      { id: 'review', kind: 'input', prompt: 'Publish this draft?' },
    ];
    await save('New workflow', { steps, edges: [{ from: 'draft', to: 'review' }] }, 'reviewed');
    await page.getByRole('link', { name: 'reviewed' }).click();
    const run = editor('Run');
    await run.getByLabel('Body (JSON)').fill(JSON.stringify({ input: 'a launch note' }));
    await run.getByRole('button', { name: 'Run', exact: true }).click();
    await run.getByRole('link', { name: 'Follow the workflow run' }).click();
    const question = page.getByRole('region', { name: 'Waiting for a person' }).getByRole('form', { name: 'Question of step review' });
    await expect.poll(() => question.textContent(), { timeout: 20_000 }).toContain('Publish this draft?');
    await screenshot('workflow-question');
    expect(await page.getByRole('link', { name: 'reviewed', exact: true }).getAttribute('href')).toBe('#/manage/workflows/reviewed');
    await question.getByLabel('Answer').fill('yes, publish');
    await question.getByRole('button', { name: 'Answer' }).click();
    const runId = decodeURIComponent(new URL(page.url()).hash.split('/').pop()!);
    const ended = await eventually(async () => {
      const workflowRun = (await hangar.request('GET', `/api/workflow-runs/${runId}`)).body;
      return workflowRun.status === 'Completed' ? workflowRun : undefined;
    }, 'the workflow run completed');
    expect(ended.outputs).toMatchObject({ draft: 'Echo: a launch note', review: 'yes, publish' });
    const [request] = (await hangar.request('GET', `/api/workflow-runs/${runId}/requests`)).body;
    expect(request).toMatchObject({ status: 'Answered', answer: 'yes, publish' });
    // Its page's edit form writes back what GET read (a null description included) as version 2.
    await page.goto(`${hangar.url}/console#/manage/workflows/reviewed`);
    await editor('Edit workflow').getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByTestId('resource').textContent()).toContain('"version": 2');
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('runs an eval suite from its page and lists the suite run with its pass rate', async () => {
    await page.goto(`${hangar.url}/console#/manage/evals`);
    await save(
      'New eval suite',
      {
        cases: [
          { input: 'ping', expected: 'Echo: ping' },
          { input: 'pong', expected: 'no such answer' },
        ],
      },
      'smoke',
    );
    await page.getByRole('link', { name: 'smoke' }).click();
    const start = editor('Run the suite');
    await start.getByLabel('Body (JSON)').fill(JSON.stringify({ agentName: 'echoer' }));
    await start.getByRole('button', { name: 'Run the suite' }).click();
    await expect.poll(() => start.getByTestId('answer').textContent()).toMatch(/"id": "[0-9a-f-]{36}"/);
    const { id } = JSON.parse((await start.getByTestId('answer').textContent())!);
    await eventually(
      async () => ((await hangar.request('GET', `/api/eval-runs/${id}`)).body.status === 'Completed' ? true : undefined),
      'the suite run',
    );
    await page.reload();
    const runs = page.getByRole('table', { name: 'Suite runs' });
    await expect.poll(() => runs.textContent()).toContain('Completed');
    expect(await runs.textContent()).toContain('2 of 2');
    expect(await runs.textContent()).toContain('50 %');

    // The suite run's own page: its summary and each case's result, linked to the case's run.
    await runs.getByRole('link').first().click();
    await page.getByRole('heading', { name: `Suite run ${id}` }).waitFor();
    expect(await page.locator('nav[aria-label="Sections"] [aria-current="page"]').textContent()).toBe('Manage');
    const results = page.getByRole('table', { name: 'Case results' });
    await expect.poll(() => results.locator('tbody tr').count()).toBe(2);
    const rows = await results.locator('tbody tr').allTextContents();
    expect(rows[0]).toContain('Passed');
    expect(rows[0]).toContain('Echo: ping');
    expect(rows[1]).toContain('Failed');
    expect(await page.locator('dl.facts').textContent()).toContain('2 of 2 done: 1 passed, 1 failed');
    expect(await page.getByRole('button', { name: 'Cancel suite run' }).count()).toBe(0);
    await screenshot('eval-run');
    await results.locator('tbody tr').first().getByRole('link').last().click();
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    expect(await page.locator('dl.facts').textContent()).toContain('echoer');
  });

  it('cancels a running suite run from its page', async () => {
    const timekeeper = await hangar.request('POST', '/api/agents', {
      body: { name: 'timekeeper', model: { provider: 'demo', model: 'echo' }, tools: ['clock'] },
    });
    expect(timekeeper.status).toBe(201);
    const suite = await hangar.request('PUT', '/api/evals/waits', { body: { cases: [{ input: 'what time is it?', expected: 'noon' }] } });
    expect(suite.status, suite.text).toBe(201);
    const started = await hangar.request('POST', '/api/evals/waits/runs', { body: { agentName: 'timekeeper' } });
    expect(started.status, started.text).toBe(202);
    const id = started.body.id as string;
    // Its one case waits for the approval of its clock call.
    await eventually(async () => {
      const [caseRun] = (await hangar.request('GET', '/api/runs?agentName=timekeeper&kind=Evaluation')).body;
      if (!caseRun) return undefined;
      const approvals = (await hangar.request('GET', `/api/runs/${caseRun.id}/approvals`)).body;
      return approvals.some((approval: { status: string }) => approval.status === 'Pending') ? true : undefined;
    }, 'the case waiting for an approval');
    await page.goto(`${hangar.url}/console#/eval-runs/${id}`);
    await expect.poll(() => page.locator('dl.facts').textContent()).toContain('Running');
    await page.getByRole('button', { name: 'Cancel suite run' }).click();
    await expect.poll(() => page.locator('dl.facts').textContent()).toContain('Canceled');
    expect(await page.getByRole('button', { name: 'Cancel suite run' }).count()).toBe(0);
    expect((await hangar.request('GET', `/api/eval-runs/${id}`)).body.status).toBe('Canceled');
  });

  it('starts an experiment over two versions, shows its results per variant, and stops it', async () => {
    const next = await hangar.request('PUT', '/api/agents/echoer', {
      body: { name: 'echoer', model: { provider: 'demo', model: 'echo' }, instructions: 'Echo it.' },
    });
    expect(next.status).toBe(200);
    await page.goto(`${hangar.url}/console#/manage/experiments`);
    await save(
      'New experiment',
      {
        agentName: 'echoer',
        variants: [
          { version: 1, weight: 1 },
          { version: 2, weight: 1 },
        ],
      },
      'split',
    );
    await page.getByRole('link', { name: 'split' }).click();
    await page.getByRole('button', { name: 'Start' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('"status":"Running"');
    await expect.poll(() => page.getByTestId('resource').textContent()).toContain('"status": "Running"');
    expect((await hangar.request('POST', '/api/agents/echoer/run', { body: { message: 'hi' } })).status).toBe(200);
    await page.reload();
    const variants = page.getByRole('table', { name: 'Results per variant' });
    await expect.poll(() => variants.locator('tbody tr').count()).toBe(2);
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('"status":"Stopped"');
    expect((await hangar.request('GET', '/api/experiments/split')).body.status).toBe('Stopped');
  });
});
