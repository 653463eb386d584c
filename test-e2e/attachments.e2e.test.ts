import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { allInOneModules } from '@hangar/all-in-one';
import { attachmentMigrations, type AttachmentDatabase } from '@hangar/attachment';
import { type HangarUnderTest, type HttpResult, startHangar, TEST_TOKEN } from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** SPEC "Attachments" rules 1–4 and API.md's shapes, over HTTP against all-in-one. */

const MAX_BYTES = 1024 * 1024;
let hangar: HangarUnderTest;
let storedChunks: () => Promise<number>;

const pngChunk = (type: string, data: Buffer) => {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  return Buffer.concat([length, Buffer.from(type), data, Buffer.alloc(4)]);
};
/** A structurally valid PNG of exactly `size` bytes (at least 57): signature, IHDR, IDAT of random bytes, IEND. */
const png = (size: number) =>
  Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0])),
    pngChunk('IDAT', randomBytes(size - 57)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
const exe = () =>
  Buffer.concat([
    Buffer.from('MZ'),
    Buffer.alloc(58),
    Buffer.from([0x80, 0, 0, 0]),
    Buffer.alloc(64),
    Buffer.from('PE\0\0'),
    randomBytes(400),
  ]);
const wav = () => Buffer.concat([Buffer.from('RIFF'), Buffer.from([36, 0, 0, 0]), Buffer.from('WAVEfmt '), randomBytes(200)]);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function upload(bytes: Buffer, options: { fileName?: string; type?: string; sessionId?: string; headers?: Record<string, string> } = {}) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type: options.type ?? 'application/octet-stream' }), options.fileName ?? 'upload.bin');
  const query = options.sessionId ? `?sessionId=${encodeURIComponent(options.sessionId)}` : '';
  return hangar.request('POST', `/api/attachments${query}`, { rawBody: form as never, headers: options.headers });
}

/** Bytes are removed asynchronously after an aborted stream; wait for the store to settle. */
async function expectChunks(expected: number) {
  const deadline = Date.now() + 3000;
  while ((await storedChunks()) !== expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  expect(await storedChunks()).toBe(expected);
}

/** A multipart request written by hand, ended wherever `body` ends. */
function rawMultipart(body: Buffer, boundary = 'hangar-boundary'): Promise<HttpResult> {
  const url = new URL(`${hangar.url}/api/attachments`);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: new Headers(response.headers as Record<string, string>),
            text,
            body: text ? JSON.parse(text) : undefined,
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

const part = (name: string, content: Buffer | string, fileName?: string) =>
  Buffer.concat([
    Buffer.from(`--hangar-boundary\r\nContent-Disposition: form-data; name="${name}"${fileName ? `; filename="${fileName}"` : ''}\r\n\r\n`),
    Buffer.isBuffer(content) ? content : Buffer.from(content),
    Buffer.from('\r\n'),
  ]);

beforeAll(async () => {
  hangar = await startHangar({
    modules: allInOneModules(),
    overrides: { Attachments: { MaxBytes: MAX_BYTES }, Tenancy: { Enabled: true, AllowHeaderResolution: true } },
  });
  const { db } = await hangar.openStore<AttachmentDatabase>('attachments', attachmentMigrations);
  storedChunks = async () =>
    Number(
      (
        await db
          .selectFrom('attachment_chunks')
          .select((eb) => eb.fn.countAll().as('count'))
          .executeTakeFirstOrThrow()
      ).count,
    );
});

afterAll(async () => {
  await hangar?.stop();
});

describe('upload', () => {
  it('stores a file, typed by its signature, with size and SHA-256', async () => {
    const bytes = png(5000);
    const result = await upload(bytes, { fileName: 'chart.png', type: 'image/png', sessionId: 'conv-a' });
    expect(result.status, result.text).toBe(201);
    expect(result.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      fileName: 'chart.png',
      mediaType: 'image/png',
      size: 5000,
      sha256: sha256(bytes),
      sessionId: 'conv-a',
      createdAt: expect.any(String),
    });
    expect(result.headers.get('location')).toBe(`/api/attachments/${result.body.id}`);
  });

  it('accepts a PNG declared as text/plain — as a PNG', async () => {
    const result = await upload(png(300), { fileName: 'notes.txt', type: 'text/plain' });
    expect(result.status).toBe(201);
    expect(result.body.mediaType).toBe('image/png');
  });

  it.each([
    ['plain text', Buffer.from('hello\nworld\n'), 'text/plain'],
    ['UTF-8 text', Buffer.from('grüße, 你好 — ✓\n'), 'text/plain'],
    ['a PDF', Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(500)]), 'application/pdf'],
    ['a GIF', Buffer.concat([Buffer.from('GIF89a'), randomBytes(100)]), 'image/gif'],
    ['a WAV (audio/* wildcard)', wav(), 'audio/wav'],
  ])('accepts %s', async (_case, bytes, mediaType) => {
    const result = await upload(bytes);
    expect(result.status, result.text).toBe(201);
    expect(result.body.mediaType).toBe(mediaType);
  });

  it.each([
    ['an EXE renamed .png', exe(), 'evil.png', 'image/png'],
    ['a ZIP', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), randomBytes(300)]), 'archive.zip', 'application/zip'],
    ['unknown binary', Buffer.concat([Buffer.from([0, 1, 2, 3, 0xff, 0xfe]), randomBytes(300)]), 'blob.txt', 'text/plain'],
    [
      'text that turns binary after the signature window',
      Buffer.concat([Buffer.from('a'.repeat(300_000)), Buffer.from([0, 0, 0])]),
      'log.txt',
      'text/plain',
    ],
  ])('refuses %s with 415 and leaves no bytes', async (_case, bytes, fileName, type) => {
    const before = await storedChunks();
    const listed = (await hangar.request('GET', '/api/attachments?take=200')).body.length;
    expectProblem(await upload(bytes, { fileName, type }), 415, 'unsupported_media_type');
    await expectChunks(before);
    expect((await hangar.request('GET', '/api/attachments?take=200')).body).toHaveLength(listed);
  });

  it('accepts a file of exactly Attachments:MaxBytes and refuses one byte more with 413, leaving no bytes', async () => {
    expect((await upload(png(MAX_BYTES))).status).toBe(201);
    const before = await storedChunks();
    expectProblem(await upload(png(MAX_BYTES + 1)), 413, 'payload_too_large');
    await expectChunks(before);
  });

  it('refuses an empty file with 400', async () => {
    expectProblem(await upload(Buffer.alloc(0)), 400, 'validation_failed');
  });

  it('refuses a body without a `file` part with 400', async () => {
    const result = await rawMultipart(Buffer.concat([part('note', 'no file here'), Buffer.from('--hangar-boundary--\r\n')]));
    expectProblem(result, 400, 'validation_failed');
    expect(result.body.errors).toContainEqual(expect.objectContaining({ path: 'file' }));
    const wrongName = await rawMultipart(Buffer.concat([part('document', png(100), 'a.png'), Buffer.from('--hangar-boundary--\r\n')]));
    expectProblem(wrongName, 400, 'validation_failed');
  });

  it('refuses a multipart body cut off mid-stream with 400 and leaves no bytes', async () => {
    const before = await storedChunks();
    const header = Buffer.from(
      '--hangar-boundary\r\nContent-Disposition: form-data; name="file"; filename="cut.png"\r\nContent-Type: image/png\r\n\r\n',
    );
    expectProblem(await rawMultipart(Buffer.concat([header, png(600_000)])), 400, 'validation_failed');
    await expectChunks(before);
  });

  it('refuses a non-multipart body with 415 and a malformed boundary with 400', async () => {
    expectProblem(await hangar.request('POST', '/api/attachments', { body: { file: 'x' } }), 415, 'unsupported_media_type');
    expectProblem(
      await hangar.request('POST', '/api/attachments', { rawBody: 'x', headers: { 'content-type': 'multipart/form-data' } }),
      400,
      'validation_failed',
    );
  });

  it('refuses an invalid sessionId with 400', async () => {
    expectProblem(await upload(png(100), { sessionId: 'not a session id' }), 400, 'validation_failed');
  });

  it('keeps a clean file name: no path, no control characters', async () => {
    const traversal = await upload(png(100), { fileName: '../../etc/passwd.png' });
    expect(traversal.body.fileName).toBe('passwd.png');
    // Control characters can only arrive percent-encoded (RFC 5987 filename*); raw ones are a malformed header.
    const encoded = Buffer.concat([
      Buffer.from(`--hangar-boundary\r\nContent-Disposition: form-data; name="file"; filename*=UTF-8''..%2Fpass%07wd.png\r\n\r\n`),
      png(100),
      Buffer.from('\r\n--hangar-boundary--\r\n'),
    ]);
    const result = await rawMultipart(encoded);
    expect(result.status, result.text).toBe(201);
    expect(result.body.fileName).toBe('passwd.png');
  });
});

describe('list', () => {
  it('returns descriptors only, narrowed by sessionId; session-less ones only without the filter', async () => {
    await upload(png(200), { sessionId: 'conv-b' });
    const inSession = await hangar.request('GET', '/api/attachments?sessionId=conv-b');
    expect(inSession.body).toHaveLength(1);
    expect(Object.keys(inSession.body[0]).sort()).toEqual(['createdAt', 'fileName', 'id', 'mediaType', 'sessionId', 'sha256', 'size']);
    const all = (await hangar.request('GET', '/api/attachments?take=200')).body;
    expect(all.some((attachment: any) => attachment.sessionId === null)).toBe(true);
    expect(all.some((attachment: any) => attachment.sessionId === 'conv-b')).toBe(true);
  });

  it('clamps take to 1..200 instead of rejecting it, and pages newest first', async () => {
    const all = (await hangar.request('GET', '/api/attachments?take=10000')).body;
    expect(all.length).toBeGreaterThan(5);
    expect((await hangar.request('GET', '/api/attachments?take=0')).body).toHaveLength(1);
    expect((await hangar.request('GET', '/api/attachments?skip=2&take=2')).body).toEqual(all.slice(2, 4));
    const times = all.map((attachment: any) => Date.parse(attachment.createdAt));
    expect(times).toEqual([...times].sort((a: number, b: number) => b - a));
    expectProblem(await hangar.request('GET', '/api/attachments?skip=x'), 400, 'validation_failed');
  });
});

describe('download and delete', () => {
  it('serves the bytes with the stored type, ETag = SHA-256, attachment disposition and nosniff', async () => {
    const bytes = png(700_000); // spans several stored chunks
    const created = await upload(bytes, { fileName: 'büro plan.png', type: 'text/html' });
    const response = await fetch(`${hangar.url}/api/attachments/${created.body.id}`, {
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('etag')).toBe(`"${sha256(bytes)}"`);
    expect(response.headers.get('content-disposition')).toBe(`attachment; filename="b_ro plan.png"; filename*=UTF-8''b%C3%BCro%20plan.png`);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    const cached = await fetch(`${hangar.url}/api/attachments/${created.body.id}`, {
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'if-none-match': `"${sha256(bytes)}"` },
    });
    expect(cached.status).toBe(304);
  });

  it('removes the bytes at once on delete; a second delete and any read are 404', async () => {
    const created = await upload(png(600_000));
    const before = await storedChunks();
    expect((await hangar.request('DELETE', `/api/attachments/${created.body.id}`)).status).toBe(204);
    expect(await storedChunks()).toBe(before - 3);
    expectProblem(await hangar.request('GET', `/api/attachments/${created.body.id}`), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', `/api/attachments/${created.body.id}`), 404, 'not_found');
  });

  it('answers 404 for unknown and malformed ids and for another tenant’s attachment', async () => {
    expectProblem(await hangar.request('GET', '/api/attachments/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    expectProblem(await hangar.request('GET', '/api/attachments/not-a-uuid'), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', '/api/attachments/not-a-uuid'), 404, 'not_found');
    const created = await upload(png(100));
    const other = { 'x-hangar-tenant': 'other-tenant' };
    expectProblem(await hangar.request('GET', `/api/attachments/${created.body.id}`, { headers: other }), 404, 'not_found');
    expectProblem(await hangar.request('DELETE', `/api/attachments/${created.body.id}`, { headers: other }), 404, 'not_found');
    expect((await hangar.request('GET', '/api/attachments', { headers: other })).body).toEqual([]);
    expect((await hangar.request('GET', `/api/attachments/${created.body.id}`)).status).toBe(200);
  });

  it('requires RunsWrite for uploads and deletes, RunsRead for reads', async () => {
    expectProblem(await hangar.request('GET', '/api/attachments', { token: null }), 401, 'unauthorized');
  });
});
