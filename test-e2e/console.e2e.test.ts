import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { allInOneModules } from '@hangar/all-in-one';
import {
  CONSOLE_SCREENSHOTS,
  chromiumPath,
  eventually,
  startHangar,
  startMockOpenAI,
  TEST_TOKEN,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The web console in this machine's Chromium (deploy/local/chromium.sh installs it when missing), against a
 * Hangar whose agents answer from the mock upstream, with a screenshot of each page.
 */
const PREFIX = '/hangar';

let hangar: HangarUnderTest;
let mock: MockOpenAI;
let browser: Browser;
let page: Page;

/** hangar.url ends with the prefix. */
const console_ = (hash = '') => `${hangar.url}/console${hash}`;
const origin = () => new URL(hangar.url).origin;
const screenshot = (name: string) => page.screenshot({ path: join(CONSOLE_SCREENSHOTS, `${name}.png`), fullPage: true });

beforeAll(async () => {
  mkdirSync(CONSOLE_SCREENSHOTS, { recursive: true });
  mock = await startMockOpenAI();
  mock.script('words', [{ text: 'Hello from the console test, streamed word by word.', chunkDelayMs: 150 }]);
  mock.script('slow-words', [{ text: Array.from({ length: 200 }, (_, index) => `word${index}`).join(' '), chunkDelayMs: 100 }]);
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Hangar: { Api: { Prefix: PREFIX } },
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url } },
      Approvals: { RequiredTools: ['clock'] },
    },
  });
  browser = await chromium.launch({ executablePath: await chromiumPath(), args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // A wait fails only when what it waits for never comes: on a loaded 2-core CI (split shape, load
  // average 26 on 2026-11-29) a page's first list took over 10 s to appear.
  page.setDefaultTimeout(30_000);
  // A page load includes Chromium's first start and the bundle; on a loaded 2-core CI it can take longer than one click.
  page.setDefaultNavigationTimeout(60_000);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await hangar?.stop();
  await mock?.close();
});

describe('the web console', () => {
  it('is served under the prefix without a credential, with its assets cached and a strict content policy', async () => {
    const served = await fetch(console_());
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toMatch(/^text\/html/);
    expect(served.headers.get('content-security-policy')).toContain("connect-src 'self'");
    // No Hangar:Api:AllowedOrigins here: no page may frame the console.
    expect(served.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const html = await served.text();
    expect(html).toContain(`<meta name="hangar-api-prefix" content="${PREFIX}" />`);
    const script = /src="([^"]+\.js)"/.exec(html)![1];
    expect(script.startsWith(`${PREFIX}/console/assets/`)).toBe(true);
    const asset = await fetch(`${origin()}${script}`);
    expect([asset.status, asset.headers.get('cache-control')]).toEqual([200, 'public, max-age=31536000, immutable']);
    const missing = await fetch(`${hangar.url}/console/assets/nothing.js`);
    expect([missing.status, missing.headers.get('content-type')]).toEqual([404, 'application/problem+json; charset=utf-8']);
    expect((await fetch(`${hangar.url}/console/assets/..%2Fpackage.json`)).status).toBe(404);
  });

  it('refuses a wrong token with the API’s reason, then signs in with the right one', async () => {
    await page.goto(console_());
    await page.getByLabel('Token', { exact: true }).fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/credential is not valid/);
    await page.getByLabel('Token', { exact: true }).fill(TEST_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await screenshot('agents');
  });

  it('creates an agent, showing a refusal’s reasons first', async () => {
    await page.getByLabel('Name').fill('console-bot');
    await page.getByLabel('Provider').fill('nowhere');
    await page.getByLabel('Model').fill('words');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/nowhere/);
    await page.getByLabel('Provider').fill('mock');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { name: 'console-bot' }).waitFor();
    await page.getByRole('heading', { name: 'Versions' }).waitFor();
    await screenshot('agent');
  });

  it('runs it in the playground and shows the text as it streams', async () => {
    await page.getByRole('link', { name: 'Run in the playground' }).click();
    await page.getByLabel('Message').fill('Say hello');
    // Every layout shift from here on, those right after the click included: what streams in grows
    // its own box and adds below, it never moves what is already shown.
    await page.evaluate(`window.layoutShifts = [];
      window.shiftObserver = new PerformanceObserver((list) => { for (const entry of list.getEntries()) window.layoutShifts.push(...entry.sources.map((source) => source.node?.outerHTML.slice(0, 60))); });
      window.shiftObserver.observe({ type: 'layout-shift' });`);
    await page.getByRole('button', { name: 'Run' }).click();
    const answer = page.getByTestId('answer');
    // Part of the text while the rest is still coming, then all of it.
    await expect.poll(() => answer.textContent(), { timeout: 10_000 }).toMatch(/Hello from/);
    expect(await answer.textContent()).not.toContain('word by word.');
    await expect.poll(() => answer.textContent(), { timeout: 10_000 }).toBe('Hello from the console test, streamed word by word.');
    await page.getByText('Completed').waitFor();
    expect(await page.evaluate('window.shiftObserver.disconnect(), window.layoutShifts')).toEqual([]);
    await screenshot('playground');
  });

  it('opens the run: its record, its tree and its events', async () => {
    await page.getByRole('link', { name: /^[0-9a-f-]{36}$/ }).click();
    await page.getByRole('heading', { name: /^Run / }).waitFor();
    const events = page.getByRole('list', { name: 'Run events' });
    await expect.poll(() => events.textContent()).toContain('run.completed');
    expect(await events.textContent()).toContain('run.started');
    const tree = page.getByRole('figure', { name: 'Run tree' });
    expect(await tree.getByRole('link').allTextContents()).toEqual([expect.stringContaining('console-bot')]);
    await expect.poll(() => page.getByTestId('run-input').textContent()).toContain('Say hello');
    await screenshot('run');
  });

  it('takes a score on the run page, updates it under the same name, refuses a bad one, and deletes it', async () => {
    const scores = () => page.getByRole('table', { name: 'Scores' });
    await page.getByText('No score yet.').waitFor();
    await page.getByLabel('Score name').fill('helpful');
    await page.getByLabel('Value').fill('0.8');
    await page.getByLabel('Comment').fill('clear answer');
    await page.getByRole('button', { name: 'Save score' }).click();
    await expect.poll(() => scores().textContent()).toContain('clear answer');
    await page.getByLabel('Value').fill('0.9');
    await page.getByRole('button', { name: 'Save score' }).click();
    await expect.poll(() => scores().textContent()).toContain('0.9');
    expect(await scores().locator('tbody tr').count()).toBe(1);
    await page.getByLabel('Kind').selectOption('Boolean');
    await page.getByLabel('Value (1 yes, 0 no)').fill('7');
    await page.getByRole('button', { name: 'Save score' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('0 or 1');
    await screenshot('run-scores');
    await page.getByRole('button', { name: 'Delete score helpful' }).click();
    await page.getByText('No score yet.').waitFor();
  });

  it('draws a tree of child runs as a graph, each box a link to its run', async () => {
    // Calls each callable agent it is offered, one after another, then answers.
    mock.script('delegates', (request) => {
      const callable = (request.tools ?? []).filter((tool) => tool.function.name.startsWith('call_'));
      const answered = request.messages.filter((message) => message.role === 'tool').length;
      return answered < callable.length
        ? { toolCall: { name: callable[answered].function.name, args: { message: 'go' } } }
        : { text: 'done' };
    });
    const model = { provider: 'mock', model: 'delegates' };
    for (const [name, agents] of [
      ['console-leaf', []],
      ['console-middle', ['console-leaf']],
      ['console-top', ['console-middle', 'console-leaf']],
    ] as const)
      expect((await hangar.request('POST', '/api/agents', { body: { name, model, agents } })).status).toBe(201);
    const ran = await hangar.request('POST', '/api/agents/console-top/run', {
      body: { message: 'delegate' },
      headers: { 'idempotency-key': 'console-tree' },
    });
    expect(ran.body.status).toBe('Completed');
    const tree = (await hangar.request('GET', `/api/runs/${ran.body.runId}/tree`)).body;
    // The top calls the middle (which calls the leaf), then the leaf itself.
    expect(tree.map((node: any) => `${node.agentName}@${node.depth}`).sort()).toEqual([
      'console-leaf@1',
      'console-leaf@2',
      'console-middle@1',
      'console-top@0',
    ]);
    await page.goto(console_(`#/runs/${ran.body.runId}`));
    const graph = page.getByRole('figure', { name: 'Run tree' });
    await expect.poll(() => graph.getByRole('link').count()).toBe(4);
    expect(await graph.locator('path.edge').count()).toBe(3);
    expect(await graph.getByRole('link', { name: /^console-top, Completed, \d+ tokens/ }).getAttribute('aria-current')).toBe('true');
    await screenshot('run-tree');
    const leaf = graph.getByRole('link', { name: /^console-leaf,/ }).first();
    const leafId = decodeURIComponent((await leaf.getAttribute('href'))!.split('/').pop()!);
    expect(tree.find((node: any) => node.id === leafId)?.agentName).toBe('console-leaf');
    await leaf.click();
    await expect.poll(() => page.getByRole('heading', { name: /^Run / }).textContent()).toBe(`Run ${leafId}`);
  });

  it('uploads an attachment, lists it, downloads the same bytes, and deletes it', async () => {
    await page.getByRole('link', { name: 'Attachments', exact: true }).click();
    await page.getByText('No attachment yet.').waitFor();
    const bytes = Buffer.from('# Notes\n\nUploaded from the console.\n');
    await page.getByLabel('File').setInputFiles({ name: 'notes.md', mimeType: 'text/markdown', buffer: bytes });
    await page.getByRole('button', { name: 'Upload' }).click();
    const table = page.getByRole('table', { name: 'Attachments' });
    await expect.poll(() => table.textContent()).toContain('notes.md');
    await screenshot('attachments');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'notes.md', exact: true }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('notes.md');
    const saved = await download.createReadStream();
    const chunks: Buffer[] = [];
    for await (const chunk of saved) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    await page.getByRole('button', { name: 'Delete notes.md' }).click();
    await page.getByText('No attachment yet.').waitFor();
    expect((await hangar.request('GET', '/api/attachments')).body).toEqual([]);
  });

  it('is usable from the keyboard alone', async () => {
    await page.goto(console_('#/runs'));
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await page.locator('body').focus();
    // Tab walks the sections in order; Enter on a focused one opens it.
    const reached: string[] = [];
    for (let step = 0; step < 12 && !reached.includes('Attachments'); step++) {
      await page.keyboard.press('Tab');
      reached.push(await page.evaluate('document.activeElement.textContent.trim()'));
    }
    expect(reached).toEqual(expect.arrayContaining(['Hangar', 'Agents', 'Playground', 'Runs', 'Sessions', 'Attachments']));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Attachments' }).waitFor();
    // A focused control is drawn with an outline.
    const outline = await page.evaluate('getComputedStyle(document.activeElement).outlineStyle');
    expect(outline).toBe('solid');
  });

  it('lists the run among the runs, and cancels a slow one from its page', async () => {
    const slow = await hangar.request('POST', `/api/agents`, {
      body: { name: 'console-slow', model: { provider: 'mock', model: 'slow-words' } },
    });
    expect(slow.status).toBe(201);
    const started = await hangar.request('POST', `/api/agents/console-slow/run`, {
      body: { message: 'take your time' },
      headers: { Prefer: 'respond-async' },
    });
    expect(started.status).toBe(202);
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await expect.poll(() => page.getByRole('table').textContent()).toContain('console-bot');
    await screenshot('runs');
    const runId = started.body.runId as string;
    await eventually(
      async () => ((await hangar.request('GET', `/api/runs/${runId}`)).body.status === 'Running' ? true : undefined),
      'the slow run running',
    );
    await page.goto(console_(`#/runs/${runId}`));
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const events = page.getByRole('list', { name: 'Run events' });
    await expect.poll(() => events.textContent(), { timeout: 10_000 }).toContain('run.canceled');
    expect((await hangar.request('GET', `/api/runs/${runId}`)).body.status).toBe('Canceled');
  });

  it('shows a tool call waiting for approval on the run page; approving it there lets the run go on', async () => {
    const timekeeper = await hangar.request('POST', '/api/agents', {
      body: { name: 'console-timekeeper', model: { provider: 'demo', model: 'echo' }, tools: ['clock'] },
    });
    expect(timekeeper.status).toBe(201);
    const started = await hangar.request('POST', '/api/agents/console-timekeeper/run', {
      body: { message: 'what time is it?' },
      headers: { Prefer: 'respond-async' },
    });
    expect(started.status).toBe(202);
    const runId = started.body.runId as string;
    await page.goto(console_(`#/runs/${runId}`));
    const waiting = page.getByRole('region', { name: 'Waiting for a person' });
    const card = waiting.getByLabel('Approval of clock');
    await card.waitFor();
    await screenshot('run-approval');
    await card.getByLabel('Comment').fill('fine by me');
    await card.getByRole('button', { name: 'Approve' }).click();
    await eventually(
      async () => ((await hangar.request('GET', `/api/runs/${runId}`)).body.status === 'Completed' ? true : undefined),
      'the run completed',
    );
    const [approval] = (await hangar.request('GET', `/api/runs/${runId}/approvals`)).body;
    expect(approval).toMatchObject({ status: 'Approved', comment: 'fine by me' });
    await expect.poll(() => page.getByRole('list', { name: 'Run events' }).textContent()).toContain('run.completed');
    // Nothing waits any more, so the section is gone.
    await expect.poll(() => waiting.count()).toBe(0);
  });

  it('shows two versions side by side, and rolls back to the first as a new version', async () => {
    const updated = await hangar.request('PUT', '/api/agents/console-bot', {
      body: { name: 'console-bot', instructions: 'Answer in one line.', model: { provider: 'mock', model: 'words' } },
    });
    expect(updated.status).toBe(200);
    await page.goto(console_('#/agents/console-bot'));
    await page.getByLabel('Compare version 1').check();
    await page.getByLabel('Compare version 2').check();
    const diff = page.getByRole('table', { name: 'Differences between version 1 and 2' });
    await expect.poll(() => diff.textContent()).toContain('Answer in one line.');
    expect(await diff.locator('tr.added').count()).toBeGreaterThan(0);
    await screenshot('agent-diff');
    await page.getByRole('button', { name: 'Roll back to 1' }).click();
    await page.getByLabel('Compare version 3').waitFor();
    const versions = (await hangar.request('GET', '/api/agents/console-bot/versions')).body;
    expect(versions.map((version: any) => `${version.version}:${version.instructions}`)).toEqual([
      '3:null',
      '2:Answer in one line.',
      '1:null',
    ]);
  });

  it('keeps a playground conversation in a session, and branches it at a message', async () => {
    await page.goto(console_('#/playground/console-bot'));
    await page.getByLabel('Session', { exact: false }).fill('console-chat');
    for (const message of ['First question', 'Second question']) {
      await page.getByLabel('Message').fill(message);
      await page.getByRole('button', { name: 'Run' }).click();
      await page.getByText('Completed').waitFor();
    }
    await page.getByRole('link', { name: 'Sessions', exact: true }).click();
    await page.getByRole('link', { name: 'console-chat' }).click();
    const messages = page.getByRole('list', { name: 'Messages' });
    await expect.poll(() => messages.locator('li').count()).toBe(4);
    await screenshot('session');
    await messages.locator('li').nth(1).getByRole('button', { name: 'Branch after this message' }).click();
    await page.getByText('Branched from console-chat').waitFor();
    await expect.poll(() => page.getByRole('list', { name: 'Messages' }).locator('li').count()).toBe(2);
    expect(await page.getByRole('list', { name: 'Messages' }).textContent()).toContain('First question');
  });

  it('shows quota usage and the audit trail', async () => {
    const rule = await hangar.request('PUT', '/api/quotas/console-runs', { body: { metric: 'Runs', period: 'Day', limit: 100 } });
    expect(rule.status).toBeLessThan(300);
    const key = await hangar.request('POST', '/api/api-keys', { body: { name: 'console-key', role: 'Reader' } });
    expect(key.status).toBe(201);
    await page.getByRole('link', { name: 'Quotas', exact: true }).click();
    await page.getByRole('meter', { name: /^console-runs: \d+ of 100$/ }).waitFor();
    await screenshot('quotas');
    await page.getByRole('link', { name: 'Audit', exact: true }).click();
    await expect.poll(() => page.getByRole('table').textContent()).toContain('api-key.created');
    await screenshot('audit');
  });

  it('signs in with an API key, and out again, saying why, once the key is revoked', async () => {
    const key = (await hangar.request('POST', '/api/api-keys', { body: { name: 'console-reader', role: 'Reader' } })).body;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('radio', { name: 'API key' }).check();
    await page.locator('input[name="credential"]').fill(key.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Back on the page it left (the audit trail), which a Reader may not see: the API's reason is shown.
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('requires the Admin role');
    expect((await hangar.request('DELETE', `/api/api-keys/${key.id}`)).status).toBe(204);
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.getByText('The API refused the credential in use').waitFor();
    await page.getByLabel('Token', { exact: true }).fill(TEST_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
  });

  it('reaches every route of the OpenAPI document in two clicks, and calls one with the signed-in credential', async () => {
    await page.getByRole('link', { name: 'API', exact: true }).click();
    const document = (await hangar.request('GET', '/api/openapi.json')).body;
    const routes = Object.entries(document.paths).flatMap(([path, methods]: [string, any]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    await page.getByRole('link', { name: 'GET /hangar/api/agents/{name}', exact: true }).waitFor();
    const listed = await page.locator('.explorer li a').allTextContents();
    expect(listed.sort()).toEqual(routes.sort());
    await screenshot('api');
    await page.getByRole('link', { name: 'GET /hangar/api/agents/{name}', exact: true }).click();
    await page.getByLabel('name').fill('console-bot');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('response').textContent()).toContain('"origin": "Database"');
  });

  it('checks a draft definition as it is typed, and creates the agent once it is valid', async () => {
    await page.goto(console_('#/agents'));
    const definition = page.getByLabel('Definition (JSON)');
    const check = page.getByTestId('draft-check');
    await definition.fill('{ "name": "drafted", ');
    await expect.poll(() => check.textContent()).toContain('Not a definition yet');
    await definition.fill(JSON.stringify({ name: 'drafted', model: { provider: 'mock', model: 'words' }, tools: ['no-such-tool'] }));
    await expect.poll(() => check.textContent()).toMatch(/Error at .*no-such-tool|no-such-tool/);
    expect(await page.getByRole('button', { name: 'Create from this definition' }).isDisabled()).toBe(true);
    await screenshot('draft');
    await definition.fill(JSON.stringify({ name: 'drafted', model: { provider: 'mock', model: 'words' } }));
    await expect.poll(() => check.textContent()).toBe('Valid.');
    await page.getByRole('button', { name: 'Create from this definition' }).click();
    await page.getByRole('heading', { name: 'drafted' }).waitFor();
    expect((await hangar.request('GET', '/api/agents/drafted')).status).toBe(200);
  });

  it('fits a phone’s width, actions included', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const runId = (await hangar.request('GET', '/api/runs?agentName=console-top')).body[0].id;
    for (const [hash, heading, name] of [
      ['#/runs', 'Runs', 'runs'],
      [`#/runs/${runId}`, `Run ${runId}`, 'run'],
      ['#/agents/console-bot', 'console-bot', 'agent'],
      ['#/playground/console-bot', 'Playground', 'playground'],
      ['#/attachments', 'Attachments', 'attachments'],
    ]) {
      await page.goto(console_(hash));
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      // Measured once everything it loads is shown (a loaded table is what can be too wide).
      await expect.poll(() => page.locator('[aria-busy="true"]').count()).toBe(0);
      // The page's own code, run in the browser: the document is no wider than the screen.
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      expect(overflow, hash).toBeLessThanOrEqual(0);
      await screenshot(`${name}-phone`);
    }
    await page.goto(console_('#/agents/console-bot'));
    // Rolling back is an action: a phone shows it.
    await page
      .getByRole('button', { name: /^Roll back to / })
      .first()
      .waitFor({ state: 'visible' });
  });
});
