import { allInOneModules } from '@hangar/all-in-one';
import { eventually, startHangar, startMockOpenAI, TEST_TOKEN, type HangarUnderTest, type MockOpenAI } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * API.md "Images and voice", images: POST /api/images/generate against a mock OpenAI image API over
 * real HTTP (small PNGs), each image stored as an attachment, priced per Pricing:Images; the Demo
 * provider draws offline; the route is absent while Images:Enabled is false.
 */

const acme = { 'x-hangar-tenant': 'acme' };
const globex = { 'x-hangar-tenant': 'globex' };
const PNG_SIGNATURE = '89504e470d0a1a0a';
let mock: MockOpenAI;
let priced: HangarUnderTest;
let demo: HangarUnderTest;
let off: HangarUnderTest;

const generate = (target: HangarUnderTest, body: unknown, headers = acme) =>
  target.request('POST', '/api/images/generate', { body, headers });

beforeAll(async () => {
  mock = await startMockOpenAI();
  const tenancy = { Tenancy: { Enabled: true, AllowHeaderResolution: true } };
  priced = await startHangar({
    modules: allInOneModules(),
    overrides: {
      ...tenancy,
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: mock.url, ApiKey: 'sk-images' } },
      Images: { Enabled: true, Provider: 'mock', Model: 'painter', MaxImagesPerRequest: 3 },
      Pricing: { Currency: 'EUR', Images: { mock: { painter: { PerImage: 0.04, SizeMultipliers: { '1024x1536': 1.5 } } } } },
      // Room for the artist's one image (0.06), not for a fourth of the compulsive agent's (below).
      AgentGraph: { MaxTotalCost: 0.15 },
    },
  });
  demo = await startHangar({
    modules: allInOneModules(),
    overrides: {
      ...tenancy,
      Images: { Enabled: true, Provider: 'demo', Model: 'sketch' },
      Pricing: { Images: { demo: { sketch: { OutputCostPerMillionTokens: 10 } } } },
    },
  });
  off = await startHangar({ modules: allInOneModules(), overrides: tenancy });
  // An agent that draws once, then says it is done.
  mock.script('artist', (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? { text: 'here it is' }
      : { toolCall: { name: 'generate_image', args: { prompt: 'a cat on a roof', size: '1024x1536' } } },
  );
  // An agent that never stops drawing: only a budget ends it.
  mock.script('compulsive', () => ({ toolCall: { name: 'generate_image', args: { prompt: 'another cat', size: '1024x1536' } } }));
  const compulsive = await priced.request('POST', '/api/agents', {
    body: { name: 'compulsive', model: { provider: 'mock', model: 'compulsive' }, tools: ['generate_image'] },
    headers: acme,
  });
  expect(compulsive.status, compulsive.text).toBe(201);
  const artist = await priced.request('POST', '/api/agents', {
    body: { name: 'artist', model: { provider: 'mock', model: 'artist' }, tools: ['generate_image'] },
    headers: acme,
  });
  expect(artist.status, artist.text).toBe(201);
  // Three Hangars start one after another: past the all-in-one project's 90 s on a loaded CI.
}, 180_000);

afterAll(async () => {
  await Promise.all([priced?.stop(), demo?.stop(), off?.stop()]);
  await mock?.close();
});

describe('image generation', () => {
  it('stores each image as an attachment of the caller (in its session) and prices them per image and size', async () => {
    const answer = await generate(priced, { prompt: 'a red square', n: 2, size: '1024x1536', sessionId: 'studio' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ provider: 'mock', model: 'painter', size: '1024x1536', quantity: 2, currency: 'EUR' });
    expect(answer.body.cost).toBeCloseTo(0.12);
    expect(answer.body.images).toHaveLength(2);
    expect(answer.body.images[0]).toMatchObject({ mediaType: 'image/png', sessionId: 'studio', size: expect.any(Number) });
    const sent = mock.imageRequests.at(-1)!;
    expect(sent).toMatchObject({ model: 'painter', prompt: 'a red square', n: 2, size: '1024x1536' });
    expect(sent.headers.authorization).toBe('Bearer sk-images');

    const download = await fetch(`${priced.url}/api/attachments/${answer.body.images[0].id}`, {
      headers: { authorization: `Bearer ${TEST_TOKEN}`, ...acme },
    });
    expect(download.status).toBe(200);
    expect(
      Buffer.from(await download.arrayBuffer())
        .subarray(0, 8)
        .toString('hex'),
    ).toBe(PNG_SIGNATURE);
    const listed = (await priced.request('GET', '/api/attachments?sessionId=studio', { headers: acme })).body;
    expect(listed.map((attachment: { id: string }) => attachment.id).sort()).toEqual(
      answer.body.images.map((image: { id: string }) => image.id).sort(),
    );
    // Another tenant's caller sees none of them.
    expectProblem(await priced.request('GET', `/api/attachments/${answer.body.images[0].id}`, { headers: globex }), 404, 'not_found');
  });

  it('prices a size without a multiplier at the plain price', async () => {
    const answer = await generate(priced, { prompt: 'a small square', size: '1024x1024' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.cost).toBeCloseTo(0.04);
    expect(answer.body.quantity).toBe(1);
  });

  it('refuses more images than Images:MaxImagesPerRequest, a bad size or no prompt, calling no provider', async () => {
    const calls = mock.imageRequests.length;
    expectProblem(await generate(priced, { prompt: 'many', n: 4 }), 400, 'validation_failed');
    expectProblem(await generate(priced, { prompt: 'odd', size: 'huge' }), 400, 'validation_failed');
    expectProblem(await generate(priced, { prompt: '' }), 400, 'validation_failed');
    expectProblem(await generate(priced, { prompt: 'x', extra: true }), 400, 'validation_failed');
    expect(mock.imageRequests.length).toBe(calls);
  });

  it('answers 503 when the image provider fails, storing nothing', async () => {
    mock.scriptImages('painter', { status: 500 });
    try {
      const before = (await priced.request('GET', '/api/attachments?sessionId=failing', { headers: acme })).body;
      const answer = await generate(priced, { prompt: 'will fail', sessionId: 'failing' });
      expect(answer.status, answer.text).toBe(503);
      expect(answer.headers.get('content-type')).toContain('application/problem+json');
      expect((await priced.request('GET', '/api/attachments?sessionId=failing', { headers: acme })).body).toEqual(before);
    } finally {
      mock.scriptImages('painter', { outputTokensPerImage: 0 });
    }
  });

  it('tells a request the provider refused (400) from a provider that failed or answered nonsense (503)', async () => {
    try {
      mock.scriptImages('painter', { status: 400 });
      const refused = await generate(priced, { prompt: 'something it will not draw' });
      expectProblem(refused, 400, 'provider_refused');
      mock.scriptImages('painter', { raw: 'this is not JSON' });
      expectProblem(await generate(priced, { prompt: 'garbled' }), 503, 'provider_error');
      mock.scriptImages('painter', { raw: JSON.stringify({ data: 'not a list' }) });
      expectProblem(await generate(priced, { prompt: 'empty' }), 503, 'provider_error');
      // Not a PNG at all: the attachment rules refuse it, and that is the provider's failure too.
      mock.scriptImages('painter', { raw: JSON.stringify({ data: [{ b64_json: Buffer.from('plain words').toString('base64') }] }) });
      expectProblem(await generate(priced, { prompt: 'words', sessionId: 'words' }), 503, 'provider_error');
      expect((await priced.request('GET', '/api/attachments?sessionId=words', { headers: acme })).body).toEqual([]);
    } finally {
      mock.scriptImages('painter', { outputTokensPerImage: 0 });
    }
  });

  it('draws offline with the Demo provider: a quantity, no cost where the price wants tokens it did not report', async () => {
    const auto = await generate(demo, { prompt: 'any size', size: 'auto' });
    expect(auto.status, auto.text).toBe(200);
    expect(auto.body.images[0].size).toBeGreaterThan(60);
    const answer = await generate(demo, { prompt: 'a calm sea', size: '32x32' });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ provider: 'demo', model: 'sketch', quantity: 1, cost: null });
    const download = await fetch(`${demo.url}/api/attachments/${answer.body.images[0].id}`, {
      headers: { authorization: `Bearer ${TEST_TOKEN}`, ...acme },
    });
    expect(
      Buffer.from(await download.arrayBuffer())
        .subarray(0, 8)
        .toString('hex'),
    ).toBe(PNG_SIGNATURE);
  });

  it('is absent (404) while Images:Enabled is false, and so is its tool', async () => {
    expectProblem(await generate(off, { prompt: 'anything' }), 404, 'not_found');
    const refused = await off.request('POST', '/api/agents', {
      body: { name: 'artist', model: { provider: 'demo', model: 'echo' }, tools: ['generate_image'] },
      headers: acme,
    });
    expectProblem(refused, 400, 'validation_failed');
    const catalog = (await off.request('GET', '/api/tools', { headers: acme })).body as Array<{ name: string }>;
    expect(catalog.map((entry) => entry.name)).not.toContain('generate_image');
  });

  it('gives agents a generate_image tool: the images are stored in the run’s session and priced into the run’s cost', async () => {
    const answer = await priced.request('POST', '/api/agents/artist/run', {
      body: { message: 'draw me a cat', sessionId: 'gallery' },
      headers: { ...acme, 'idempotency-key': 'artist-1' },
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.output.text).toBe('here it is');
    const run = (await priced.request('GET', `/api/runs/${answer.body.runId}`, { headers: acme })).body;
    // The chat model has no price; the image's (0.04 × 1.5 for 1024x1536) is the run's cost.
    expect(run.cost).toMatchObject({ currency: 'EUR' });
    expect(run.cost.total).toBeCloseTo(0.06);
    const stored = (await priced.request('GET', '/api/attachments?sessionId=gallery', { headers: acme })).body;
    expect(stored).toHaveLength(1);
    expect(stored[0].mediaType).toBe('image/png');
    const toolResult = mock.requests
      .filter((request) => request.model === 'artist')
      .at(-1)!
      .messages.find((message) => message.role === 'tool');
    expect(JSON.stringify(toolResult?.content)).toContain(stored[0].id);
  });

  it('counts the images a run drew against AgentGraph:MaxTotalCost between its steps', async () => {
    const answer = await priced.request('POST', '/api/agents/compulsive/run', {
      body: { message: 'draw cats', sessionId: 'compulsive' },
      headers: { ...acme, 'idempotency-key': 'compulsive-1' },
    });
    expectProblem(answer, 503, 'agent_graph_limit');
    // 0.06 an image: after the third (0.18 > 0.15) the tree stops, before a fourth model step.
    const run = (await priced.request('GET', `/api/runs/${answer.body.runId}`, { headers: acme })).body;
    expect(run).toMatchObject({ status: 'Failed', errorType: 'agent_graph_limit' });
    expect(run.cost.total).toBeCloseTo(0.18);
    expect(mock.requests.filter((request) => request.model === 'compulsive')).toHaveLength(3);
    expect((await priced.request('GET', '/api/attachments?sessionId=compulsive', { headers: acme })).body).toHaveLength(3);
  });
});

describe('image generation under quotas', () => {
  const initech = { 'x-hangar-tenant': 'initech' };
  const putRule = (name: string, body: unknown) => priced.request('PUT', `/api/quotas/${name}`, { body, headers: initech });
  const usedOf = async (name: string) =>
    ((await priced.request('GET', '/api/quotas', { headers: initech })).body as any[]).find((rule) => rule.name === name)?.used;

  it('counts what a generation cost toward the tenant’s Cost rules for every agent, and refuses more once one is used up', async () => {
    // Neither an agent's Cost rule nor a Runs rule counts images (a used-up one of either refusing none is governance's test).
    expect((await putRule('artist-spend', { metric: 'Cost', period: 'Day', limit: 0.01, agentName: 'artist' })).status).toBe(201);
    expect((await putRule('no-runs', { metric: 'Runs', period: 'Day', limit: 1 })).status).toBe(201);
    expect((await putRule('spend', { metric: 'Cost', period: 'Day', limit: 0.1 })).status).toBe(201);

    const first = await generate(priced, { prompt: 'a blue square', n: 2 }, initech);
    expect(first.status, first.text).toBe(200);
    expect(first.body.cost).toBeCloseTo(0.08);
    // Counted before the answer, once, and only under the rule for every agent.
    expect(await usedOf('spend')).toBeCloseTo(0.08);
    expect(await usedOf('artist-spend')).toBe(0);
    expect(await usedOf('no-runs')).toBe(0);

    // 0.08 of 0.1 is not used up: one more goes through and passes the limit (admission checks, it does not reserve).
    expect((await generate(priced, { prompt: 'a green square' }, initech)).status).toBe(200);
    expect(await usedOf('spend')).toBeCloseTo(0.12);

    const asked = mock.imageRequests.length;
    const refused = await generate(priced, { prompt: 'a yellow square' }, initech);
    expectProblem(refused, 429, 'quota_exceeded');
    expect(refused.body).toMatchObject({ quota: 'spend', limit: 0.1, resetsAt: expect.any(String) });
    expect(refused.body.used).toBeCloseTo(0.12);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(mock.imageRequests).toHaveLength(asked);
    // Bad input is still 400 first; another tenant draws on.
    expectProblem(await generate(priced, { prompt: 'a square', n: 9 }, initech), 400, 'validation_failed');
    expect((await generate(priced, { prompt: 'a square' }, globex)).status).toBe(200);
  });

  it('counts the images an agent’s tool drew once, as part of its run’s cost', async () => {
    const hooli = { 'x-hangar-tenant': 'hooli' };
    for (const [name, body] of [
      ['hooli-spend', { metric: 'Cost', period: 'Day', limit: 10 }],
      ['hooli-tokens', { metric: 'Tokens', period: 'Day', limit: 1_000_000 }],
    ] as const)
      expect((await priced.request('PUT', `/api/quotas/${name}`, { body, headers: hooli })).status).toBe(201);
    const artist = await priced.request('POST', '/api/agents', {
      body: { name: 'artist', model: { provider: 'mock', model: 'artist' }, tools: ['generate_image'] },
      headers: hooli,
    });
    expect(artist.status, artist.text).toBe(201);
    const answer = await priced.request('POST', '/api/agents/artist/run', { body: { message: 'draw me a cat' }, headers: hooli });
    expect(answer.status, answer.text).toBe(200);
    const used = async (name: string) =>
      ((await priced.request('GET', '/api/quotas', { headers: hooli })).body as any[]).find((rule) => rule.name === name).used;
    // The run's tokens and cost are counted together, from its end; the tool's image counted on
    // its own would have come before them.
    await eventually(async () => ((await used('hooli-tokens')) > 0 ? true : undefined), 'the run counted');
    expect(await used('hooli-spend')).toBeCloseTo(0.06, 10);
  });
});
