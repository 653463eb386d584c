import { request as httpRequest, type Agent } from 'node:http';
import fc from 'fast-check';

/**
 * Requests for every operation of an OpenAPI document, well-formed and hostile: path segments that
 * are not valid percent-encoding, NUL characters, deep nesting, wrong types, undecodable bodies,
 * odd headers. Bodies follow the operation's schema most of the time, so requests get past the
 * parser into the routes, and stray from it the rest.
 */

type JsonSchema = Record<string, any>;

export interface FuzzOperation {
  method: string;
  path: string;
  operationId: string;
  query: Array<{ name: string; schema: JsonSchema }>;
  body?: { contentType: string; schema: JsonSchema };
}

export interface FuzzRequest {
  operationId: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface FuzzResponse {
  status: number;
  contentType: string;
  body: string;
}

/** Values the fuzz puts where a name or id goes, besides ones that exist. */
const HOSTILE_SEGMENTS = [
  '%ZZ',
  '%',
  '%00',
  'a%00b',
  '%C0%AF',
  '%ED%A0%80',
  '%FF%FE',
  '..',
  '%2e%2e',
  '%2F',
  'x'.repeat(2000),
  '%20',
  '~',
  '\u00e9',
];
const HOSTILE_STRINGS = [
  '',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\uffff',
  ' '.repeat(300),
  'A'.repeat(20_000),
  '{{x}}',
  "'; drop table runs; --",
  '../../etc/passwd',
  '-1',
  '1e309',
  'null',
];
const HOSTILE_VALUES: unknown[] = [
  null,
  -1,
  0,
  1e308,
  -1e308,
  2 ** 53 + 1,
  0.5,
  true,
  [],
  {},
  [null],
  { '': null },
  { __proto__: { x: 1 } },
  'x'.repeat(100_000),
];

export function operationsOf(document: JsonSchema): FuzzOperation[] {
  const operations: FuzzOperation[] = [];
  for (const [path, methods] of Object.entries<JsonSchema>(document.paths)) {
    for (const [method, operation] of Object.entries<JsonSchema>(methods)) {
      const content = operation.requestBody?.content as Record<string, { schema: JsonSchema }> | undefined;
      const [contentType, media] = Object.entries(content ?? {})[0] ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
        query: (operation.parameters ?? [])
          .filter((parameter: JsonSchema) => parameter.in === 'query')
          .map((parameter: JsonSchema) => ({ name: parameter.name, schema: parameter.schema ?? {} })),
        ...(contentType && { body: { contentType, schema: media!.schema } }),
      });
    }
  }
  return operations;
}

/** A value of `schema` (refs resolved in `document`), or now and then a hostile one in its place. */
function valueOf(schema: JsonSchema, document: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const hostile = fc.constantFrom(...HOSTILE_VALUES, ...HOSTILE_STRINGS);
  return fc.oneof(
    { weight: 10, arbitrary: conforming(schema, document, depth) },
    { weight: 1, arbitrary: hostile },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

function conforming(schema: JsonSchema, document: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (depth > 6) return fc.constant(null);
  if (typeof schema.$ref === 'string')
    return conforming(document.components.schemas[schema.$ref.split('/').pop()!] ?? {}, document, depth + 1);
  const choices = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (choices?.length) return fc.oneof(...choices.map((choice) => conforming(choice, document, depth + 1)));
  if (Array.isArray(schema.enum) && schema.enum.length) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      return fc.oneof(
        fc.string({ maxLength: 24 }),
        fc.string({ unit: 'grapheme', maxLength: 12 }),
        fc.constantFrom('demo', 'echo', 'target', 'a-b_c'),
      );
    case 'integer':
      return fc.oneof(fc.integer({ min: -5, max: 200 }), fc.integer());
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, min: -10, max: 10 }), fc.double({ noNaN: true }));
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(valueOf(schema.items ?? {}, document, depth + 1), { maxLength: 3 });
    case 'object': {
      const properties = Object.entries<JsonSchema>(schema.properties ?? {});
      const required = new Set<string>(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of properties) record[name] = valueOf(property, document, depth + 1);
      const known = fc.record(record, { requiredKeys: properties.map(([name]) => name).filter((name) => required.has(name)) });
      const extra = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 });
      return fc.tuple(known, fc.option(extra, { freq: 4 })).map(([value, more]) => ({ ...(more ?? {}), ...value }));
    }
    default:
      return fc.jsonValue({ maxDepth: 3 });
  }
}

/** Percent-encodes any text; a lone surrogate (which encodeURIComponent refuses) becomes U+FFFD. */
const encode = (text: string) =>
  encodeURIComponent(text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));

/** A path segment: a real name most of the time, else hostile or random text (encoded or not). */
function segmentOf(known: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...known) },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }).map(encode) },
    { weight: 1, arbitrary: fc.uuid() },
  );
}

/** Query values: what the schema allows, hostile text, or a NUL, each percent-encoded. */
function queryOf(query: FuzzOperation['query'], document: JsonSchema): fc.Arbitrary<string> {
  const parameters = query.map(({ name, schema }) =>
    fc
      .option(
        fc.oneof(
          conforming(schema, document, 0).map((value) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''))),
          fc.constantFrom(...HOSTILE_STRINGS),
        ),
        { freq: 2 },
      )
      .map((value) => (value === null ? undefined : `${encode(name)}=${encode(String(value))}`)),
  );
  const stray = fc.option(fc.constantFrom('limit=-1', 'limit=abc', 'cursor=%ZZ', 'x=%00', 'a[b]=c', 'limit=1&limit=2'), { freq: 4 });
  return fc.tuple(fc.tuple(...parameters), stray).map(([values, extra]) => {
    const all = [...values.filter((value): value is string => value !== undefined), ...(extra ? [extra] : [])];
    return all.length ? `?${all.join('&')}` : '';
  });
}

/** The body as sent: JSON of a (mostly) conforming value, or something that is not JSON at all. */
function bodyOf(operation: FuzzOperation, document: JsonSchema): fc.Arbitrary<{ body?: string | Buffer; contentType?: string }> {
  if (!operation.body) {
    return fc
      .option(fc.constantFrom('{}', 'junk'), { freq: 6 })
      .map((body) => (body === null ? {} : { body, contentType: 'application/json' }));
  }
  if (operation.body.contentType !== 'application/json') {
    return fc.uint8Array({ maxLength: 256 }).map((bytes) => ({ body: Buffer.from(bytes), contentType: operation.body!.contentType }));
  }
  const json = valueOf(operation.body.schema, document).map((value) => ({
    body: JSON.stringify(value) ?? 'null',
    contentType: 'application/json',
  }));
  const malformed = fc.constantFrom(
    { body: '{"message":', contentType: 'application/json' },
    { body: `${'['.repeat(5_000)}${']'.repeat(5_000)}`, contentType: 'application/json' },
    { body: '{"message":"hi"}', contentType: 'text/plain' },
    { body: '{"message":"hi"}', contentType: 'application/json; charset=latin-9' },
    { body: '', contentType: 'application/json' },
    { body: undefined, contentType: undefined },
  );
  return fc.oneof({ weight: 8, arbitrary: json }, { weight: 1, arbitrary: malformed });
}

/** Headers around the body: a credential (now and then a bad one), idempotency, async, SSE, encodings. */
function headersOf(token: string): fc.Arbitrary<Record<string, string>> {
  return fc
    .record({
      authorization: fc.oneof(
        { weight: 12, arbitrary: fc.constant(`Bearer ${token}`) },
        fc.constantFrom('', 'Bearer', 'Bearer x', 'Basic Zm9vOmJhcg=='),
      ),
      idempotencyKey: fc.option(
        fc.string({ minLength: 1, maxLength: 40 }).filter((key) => /^[\x21-\x7e]+$/.test(key)),
        { freq: 4 },
      ),
      prefer: fc.option(fc.constant('respond-async'), { freq: 5 }),
      accept: fc.option(fc.constantFrom('text/event-stream', 'application/json', '*/*', 'image/png'), { freq: 3 }),
      contentEncoding: fc.option(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown'), { freq: 12 }),
    })
    .map(({ authorization, idempotencyKey, prefer, accept, contentEncoding }) => ({
      ...(authorization && { authorization }),
      ...(idempotencyKey && { 'idempotency-key': idempotencyKey }),
      ...(prefer && { prefer }),
      ...(accept && { accept }),
      ...(contentEncoding && { 'content-encoding': contentEncoding }),
    }));
}

export function requestArbitrary(
  operation: FuzzOperation,
  document: JsonSchema,
  options: { token: string; known: Record<string, string[]> },
) {
  const names = [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
  const segments = fc.tuple(...names.map((name) => segmentOf(options.known[name] ?? options.known.default)));
  return fc
    .tuple(segments, queryOf(operation.query, document), bodyOf(operation, document), headersOf(options.token))
    .map(([values, query, { body, contentType }, headers]): FuzzRequest => {
      let index = 0;
      const path = operation.path.replace(/\{\w+\}/g, () => values[index++]) + query;
      return {
        operationId: operation.operationId,
        method: operation.method,
        path,
        headers: { ...headers, ...(contentType && { 'content-type': contentType }) },
        body,
      };
    });
}

/**
 * Sends a fuzz request exactly as generated (no URL normalization) and reads the answer; an event
 * stream is read only to its headers (a run's stream may last). Rejects only on a socket error.
 */
export function sendFuzzRequest(baseUrl: string, request: FuzzRequest, agent: Agent): Promise<FuzzResponse> {
  const base = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const call = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: `${base.pathname.replace(/\/$/, '')}${request.path}`,
        // A body is framed by its length (a GET would otherwise send it unframed, as the next request).
        headers: { ...request.headers, ...(request.body !== undefined && { 'content-length': String(Buffer.byteLength(request.body)) }) },
        agent,
      },
      (response) => {
        const contentType = String(response.headers['content-type'] ?? '');
        if (contentType.startsWith('text/event-stream')) {
          response.destroy();
          return resolve({ status: response.statusCode!, contentType, body: '' });
        }
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, contentType, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    call.setTimeout(30_000, () => call.destroy(new Error(`${request.method} ${request.path}: no answer within 30 s`)));
    call.on('error', reject);
    call.end(request.body);
  });
}

/**
 * What is wrong with an answer: a 5xx, or an error that is not problem+json (on the OpenAI-compatible
 * `/v1` routes: not OpenAI's error body); undefined when it is fine.
 */
/** `path` is the operation's, below the prefix. */
export function answerProblem(response: FuzzResponse, path: string): string | undefined {
  if (response.status >= 500) return `${response.status}: ${response.body.slice(0, 300)}`;
  if (response.status < 400) return undefined;
  if (path.startsWith('/v1/')) return openAIErrorProblem(response);
  if (!response.contentType.startsWith('application/problem+json'))
    return `${response.status} as ${response.contentType || 'no content type'}`;
  try {
    const problem = JSON.parse(response.body) as { status?: number; errorType?: string };
    if (problem.status !== response.status || typeof problem.errorType !== 'string')
      return `${response.status}: a problem body without status/errorType`;
  } catch {
    return `${response.status}: a problem body that is not JSON`;
  }
  return undefined;
}

function openAIErrorProblem(response: FuzzResponse): string | undefined {
  // A request that is not valid HTTP (a raw non-ASCII path) is answered before any route is known: problem+json.
  if (response.contentType.startsWith('application/problem+json') && response.body.includes('the request is not valid HTTP/1.1'))
    return undefined;
  if (!response.contentType.startsWith('application/json')) return `${response.status} as ${response.contentType || 'no content type'}`;
  try {
    const { error } = JSON.parse(response.body) as { error?: { message?: unknown; type?: unknown; code?: unknown } };
    if (typeof error?.message !== 'string' || typeof error.type !== 'string' || typeof error.code !== 'string')
      return `${response.status}: not OpenAI's error body`;
  } catch {
    return `${response.status}: an error body that is not JSON`;
  }
  return undefined;
}
