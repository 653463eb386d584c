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

const KINDS = ['API keys', 'Webhooks', 'Skills', 'Skill script grants', 'Schedules', 'Tool servers', 'Knowledge', 'Tenants'];
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
    },
  });
  expect(
    (await hangar.request('POST', '/api/agents', { body: { name: 'echoer', model: { provider: 'demo', model: 'echo' } } })).status,
  ).toBe(201);
  browser = await chromium.launch({ executablePath: await chromiumPath(), args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.setDefaultTimeout(10_000);
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
});
