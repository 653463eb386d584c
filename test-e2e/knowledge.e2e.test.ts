import { allInOneModules } from '@hangar/all-in-one';
import {
  parseSseFrames,
  pdfWithText,
  startHangar,
  startMockOpenAI,
  TEST_TOKEN,
  type HangarUnderTest,
  type MockOpenAI,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** API.md "Knowledge": collections, uploads (JSON, text, Markdown, PDF), search, the knowledge tool, isolation and refusals. */

const acme = { 'x-hangar-tenant': 'acme' };
const globex = { 'x-hangar-tenant': 'globex' };
const DIMENSIONS = 128;
const MAX_BYTES = 300_000;
let model: MockOpenAI;
let hangar: HangarUnderTest;

const put = (collection: string, body: unknown, headers = acme) => hangar.request('PUT', `/api/knowledge/${collection}`, { body, headers });
const addText = (collection: string, name: string, text: string, headers = acme) =>
  hangar.request('POST', `/api/knowledge/${collection}/documents`, { body: { name, text }, headers });
const search = (collection: string, body: unknown, headers = acme) =>
  hangar.request('POST', `/api/knowledge/${collection}/search`, { body, headers });

async function upload(collection: string, fileName: string, bytes: Uint8Array, headers = acme) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), fileName);
  const response = await fetch(`${hangar.url}/api/knowledge/${collection}/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, ...headers },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

const filler = (index: number) =>
  `Notebook ${index}. ${['Weather', 'Gardening', 'Trains', 'Cooking', 'Music'][index % 5]} notes: practice ${index % 7}, review ${index % 11}, plan ${index % 13}.`;

beforeAll(async () => {
  model = await startMockOpenAI();
  // Searches the knowledge tool with the user's question, then answers with what came back.
  model.script('reader', (request) => {
    const result = request.messages.find((message) => message.role === 'tool');
    if (result) return { text: `found: ${typeof result.content === 'string' ? result.content : JSON.stringify(result.content)}` };
    return { toolCall: { name: 'knowledge__handbook', args: { query: String(request.messages.at(-1)?.content), topK: 2 } } };
  });
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: {
      Tenancy: { Enabled: true, AllowHeaderResolution: true },
      Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: model.url, MaxRetries: 0 }, claude: { Kind: 'Anthropic', ApiKey: 'x' } },
      Knowledge: { Dimensions: DIMENSIONS, ChunkSize: 300, ChunkOverlap: 30, MaxResults: 5 },
      Attachments: { MaxBytes: MAX_BYTES },
    },
  });
});

afterAll(async () => {
  await hangar?.stop();
  await model?.close();
});

describe('collections', () => {
  it('creates a collection, changes its description, and refuses another embedding model with 409', async () => {
    const created = await put('handbook', { description: 'The crew handbook', embeddingProvider: 'demo', embeddingModel: 'hash' });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ name: 'handbook', embeddingProvider: 'demo', embeddingModel: 'hash', documents: 0, chunks: 0 });
    const described = await put('handbook', {
      description: 'The handbook, 2nd edition',
      embeddingProvider: 'demo',
      embeddingModel: 'hash',
    });
    expect(described.status).toBe(200);
    expect(described.body.description).toBe('The handbook, 2nd edition');
    expectProblem(await put('handbook', { embeddingProvider: 'demo', embeddingModel: 'other' }), 409, 'conflict');
    expect((await hangar.request('GET', '/api/knowledge/handbook', { headers: acme })).body.embeddingModel).toBe('hash');
  });

  it('refuses what it cannot store with 400 and stores nothing', async () => {
    expectProblem(await put('bad name', { embeddingProvider: 'demo', embeddingModel: 'hash' }), 400, 'validation_failed');
    const unknown = await put('x1', { embeddingProvider: 'nowhere', embeddingModel: 'm' });
    expectProblem(unknown, 400, 'validation_failed');
    expect(unknown.text).toContain('Providers:nowhere');
    expect((await put('x2', { embeddingProvider: 'claude', embeddingModel: 'm' })).text).toContain('makes no embeddings');
    expectProblem(await put('x3', { embeddingProvider: 'demo' }), 400, 'validation_failed');
    expectProblem(await put('x4', { embeddingProvider: 'demo', embeddingModel: 'hash', extra: 1 }), 400, 'validation_failed');
    const names = (await hangar.request('GET', '/api/knowledge', { headers: acme })).body.map(
      (collection: { name: string }) => collection.name,
    );
    expect(names).toEqual(['handbook']);
  });
});

describe('documents and search', () => {
  it('uploads 200 documents and finds the planted answer first', async () => {
    const planted = 137;
    for (let index = 0; index < 200; index++) {
      const text = index === planted ? `${filler(index)} The launch code of Project Falcon is 7-4-1.` : filler(index);
      const added = await addText('handbook', `note-${index}.txt`, text);
      expect(added.status, added.text).toBe(201);
    }
    const found = await search('handbook', { query: 'What is the launch code of Project Falcon?' });
    expect(found.status, found.text).toBe(200);
    expect(found.body.results).toHaveLength(5);
    expect(found.body.results[0]).toMatchObject({ documentName: `note-${planted}.txt`, chunk: 0 });
    expect(found.body.results[0].text).toContain('7-4-1');
    expect((await search('handbook', { query: 'Project Falcon', topK: 2 })).body.results).toHaveLength(2);
    // More than Knowledge:MaxResults is cut to it.
    expect((await search('handbook', { query: 'Project Falcon', topK: 50 })).body.results).toHaveLength(5);
    expect((await hangar.request('GET', '/api/knowledge/handbook', { headers: acme })).body).toMatchObject({ documents: 200, chunks: 200 });
    // 200 uploads one after another: 3 s alone, over 30 s in a CI run beside a suite of many processes.
  }, 90_000);

  it('reads a PDF, a Markdown file and plain text from multipart uploads, chunked by ChunkSize', async () => {
    const pdf = await upload('handbook', 'manual.pdf', pdfWithText(['Airlock procedure: close the inner door first.', 'Then vent.']));
    expect(pdf.status, pdf.text).toBe(201);
    expect(pdf.body).toMatchObject({ name: 'manual.pdf', mediaType: 'application/pdf', chunks: 1 });
    const long = Array.from({ length: 40 }, (_, index) => `Sentence ${index} about docking clamps.`).join(' ');
    const markdown = await upload('handbook', 'docking.md', Buffer.from(`# Docking\n\n${long}`));
    expect(markdown.body).toMatchObject({ mediaType: 'text/markdown' });
    expect(markdown.body.chunks).toBeGreaterThan(long.length / 300);
    expect((await upload('handbook', 'plain.txt', Buffer.from('Galley hours are 6 to 22.'))).body).toMatchObject({
      mediaType: 'text/plain',
    });
    expect((await search('handbook', { query: 'airlock procedure inner door' })).body.results[0].documentName).toBe('manual.pdf');
  });

  it('refuses an unreadable or oversized upload and one with no text, storing nothing', async () => {
    const before = (await hangar.request('GET', '/api/knowledge/handbook', { headers: acme })).body.documents;
    expectProblem(
      await upload('handbook', 'image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0])),
      415,
      'unsupported_media_type',
    );
    expectProblem(await upload('handbook', 'big.txt', Buffer.alloc(MAX_BYTES + 1, 'a')), 413, 'payload_too_large');
    expectProblem(await upload('handbook', 'broken.pdf', Buffer.from('%PDF-1.7 not really')), 400, 'validation_failed');
    expectProblem(await addText('handbook', 'blank.txt', '   \n  '), 400, 'validation_failed');
    expectProblem(await addText('handbook', '', 'no name'), 400, 'validation_failed');
    expectProblem(
      await hangar.request('POST', '/api/knowledge/handbook/documents', {
        rawBody: 'text',
        headers: { ...acme, 'content-type': 'text/plain' },
      }),
      415,
      'unsupported_media_type',
    );
    expectProblem(await addText('missing', 'a.txt', 'text'), 404, 'not_found');
    expectProblem(await search('handbook', { query: '' }), 400, 'validation_failed');
    expectProblem(await search('handbook', { query: 'x', topK: 0 }), 400, 'validation_failed');
    expect((await hangar.request('GET', '/api/knowledge/handbook', { headers: acme })).body.documents).toBe(before);
  });

  it('lists documents newest first and deletes one with its chunks', async () => {
    const listed = await hangar.request('GET', '/api/knowledge/handbook/documents?take=2', { headers: acme });
    expect(listed.status).toBe(200);
    expect(listed.body.map((document: { name: string }) => document.name)).toEqual(['plain.txt', 'docking.md']);
    const docking = listed.body[1];
    expect((await hangar.request('DELETE', `/api/knowledge/handbook/documents/${docking.id}`, { headers: acme })).status).toBe(204);
    expectProblem(await hangar.request('DELETE', `/api/knowledge/handbook/documents/${docking.id}`, { headers: acme }), 404, 'not_found');
    const hits = (await search('handbook', { query: 'docking clamps sentence' })).body.results;
    expect(hits.map((hit: { documentName: string }) => hit.documentName)).not.toContain('docking.md');
  });
});

describe('embeddings from an OpenAI-compatible provider', () => {
  it('embeds chunks and queries through the provider, asking for Knowledge:Dimensions numbers', async () => {
    expect((await put('remote', { embeddingProvider: 'mock', embeddingModel: 'text-embedding-3-small' })).status).toBe(201);
    const calls = model.embeddingRequests.length;
    expect((await addText('remote', 'a.txt', 'Reactor coolant must stay below 300 kelvin.')).status).toBe(201);
    expect((await addText('remote', 'b.txt', 'The cafeteria serves soup on Fridays.')).status).toBe(201);
    const found = await search('remote', { query: 'reactor coolant temperature' });
    expect(found.body.results[0].documentName).toBe('a.txt');
    const made = model.embeddingRequests.slice(calls);
    expect(made).toHaveLength(3);
    expect(made.every((request) => request.model === 'text-embedding-3-small' && request.dimensions === DIMENSIONS)).toBe(true);
    expect(made[2].input).toEqual(['reactor coolant temperature']);
  });

  it('answers 503 when the embedding model fails or returns another size, and stores nothing', async () => {
    model.scriptEmbeddings('text-embedding-3-small', { status: 500 });
    try {
      const failed = await addText('remote', 'c.txt', 'Never stored.');
      expectProblem(failed, 503, 'provider_unavailable');
      expectProblem(await search('remote', { query: 'anything' }), 503, 'provider_unavailable');
      model.scriptEmbeddings('text-embedding-3-small', { dimensions: DIMENSIONS + 1 });
      const wrongSize = await addText('remote', 'c.txt', 'Never stored either.');
      expectProblem(wrongSize, 503, 'provider_unavailable');
      expect(wrongSize.text).toContain(`Knowledge:Dimensions is ${DIMENSIONS}`);
    } finally {
      model.scriptEmbeddings('text-embedding-3-small', undefined);
    }
    expect((await hangar.request('GET', '/api/knowledge/remote', { headers: acme })).body.documents).toBe(2);
  });
});

describe('the knowledge tool', () => {
  it('validates knowledge:<collection> references with a fresh lookup', async () => {
    const agent = (tools: string[]) => ({
      name: 'librarian',
      instructions: 'Answer from the handbook.',
      model: { provider: 'mock', model: 'reader' },
      tools,
    });
    const missing = await hangar.request('POST', '/api/agents', { body: agent(['knowledge:nowhere']), headers: acme });
    expectProblem(missing, 400, 'validation_failed');
    expect(missing.text).toContain('collection \\"nowhere\\" does not exist');
    // Another tenant's collection of that name is not this tenant's.
    expectProblem(
      await hangar.request('POST', '/api/agents', { body: agent(['knowledge:handbook']), headers: globex }),
      400,
      'validation_failed',
    );
    expect((await hangar.request('POST', '/api/agents', { body: agent(['knowledge:handbook']), headers: acme })).status).toBe(201);
  });

  it('a model calls the knowledge tool: the search is recorded and its passages reach the answer', async () => {
    const run = await hangar.request('POST', '/api/agents/librarian/run', {
      body: { message: 'What is the launch code of Project Falcon?' },
      headers: { ...acme, 'idempotency-key': crypto.randomUUID() },
    });
    expect(run.status, run.text).toBe(200);
    expect(run.body.output.text).toContain('7-4-1');
    const toolRequest = model.requests.filter((request) => request.model === 'reader').at(-2)!;
    expect(toolRequest.tools?.map((tool) => tool.function.name)).toEqual(['knowledge__handbook']);
    const frames = parseSseFrames((await hangar.request('GET', `/api/runs/${run.body.runId}/events`, { headers: acme })).text);
    expect(frames.find((frame) => frame.event === 'tool.invoking')?.data.data).toMatchObject({
      toolName: 'knowledge__handbook',
      args: { query: 'What is the launch code of Project Falcon?', topK: 2 },
    });
    const result = frames.find((frame) => frame.event === 'tool.completed')?.data.data.result;
    expect(result).toHaveLength(2);
    expect(result[0]).toMatchObject({ document: 'note-137.txt', chunk: 0 });
  });
});

describe('tenancy', () => {
  it('keeps each tenant to its own collections: another tenant’s is 404 on every route', async () => {
    expect((await hangar.request('GET', '/api/knowledge', { headers: globex })).body).toEqual([]);
    expectProblem(await hangar.request('GET', '/api/knowledge/handbook', { headers: globex }), 404, 'not_found');
    expectProblem(await search('handbook', { query: 'launch code' }, globex), 404, 'not_found');
    expectProblem(await addText('handbook', 'x.txt', 'intruder', globex), 404, 'not_found');
    expectProblem(await hangar.request('GET', '/api/knowledge/handbook/documents', { headers: globex }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/knowledge/handbook', { headers: globex }), 404, 'not_found');
    expect((await hangar.request('GET', '/api/knowledge/handbook', { headers: acme })).status).toBe(200);
  });

  it('deletes a collection with its documents', async () => {
    expect((await hangar.request('DELETE', '/api/knowledge/remote', { headers: acme })).status).toBe(204);
    expectProblem(await hangar.request('GET', '/api/knowledge/remote/documents', { headers: acme }), 404, 'not_found');
    expectProblem(await search('remote', { query: 'reactor' }), 404, 'not_found');
  });
});

describe('retention', () => {
  it('DocumentEmbeddings purges documents uploaded before the cutoff, with their chunks, and keeps newer ones', async () => {
    expect((await put('dated', { embeddingProvider: 'demo', embeddingModel: 'hash' })).status).toBe(201);
    expect((await addText('dated', 'old.txt', 'An old note about hull paint.')).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect((await addText('dated', 'new.txt', 'A new note about hull paint.')).status).toBe(201);
    const policy = await hangar.request('PUT', '/api/retention/DocumentEmbeddings', { body: { maxAge: '00:00:02' } });
    expect(policy.status, policy.text).toBe(201);
    const applied = await hangar.request('POST', '/api/retention/run');
    expect(applied.status, applied.text).toBe(200);
    const result = applied.body.results.find((entry: { target: string }) => entry.target === 'DocumentEmbeddings');
    expect(result.deleted).toBeGreaterThanOrEqual(1);
    const left = await hangar.request('GET', '/api/knowledge/dated/documents', { headers: acme });
    expect(left.body.map((document: { name: string }) => document.name)).toEqual(['new.txt']);
    expect((await search('dated', { query: 'hull paint' })).body.results.map((hit: { documentName: string }) => hit.documentName)).toEqual([
      'new.txt',
    ]);
  });
});
