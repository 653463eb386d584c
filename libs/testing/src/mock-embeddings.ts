import type { ServerResponse } from 'node:http';

/** What the mock answers to one embeddings call of a model. */
export type MockEmbeddingReply = { status: number; body?: string } | { dimensions: number };

export interface RecordedEmbeddingRequest {
  model: string;
  input: string[];
  dimensions: number | undefined;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A vector for `text` made from its words (each word ±1 at a hashed position, then scaled to
 * length 1), so texts sharing words are near: enough for tests of search that want the planted
 * answer first. Not Hangar's Demo embedding: the upstream is a stranger.
 */
export function mockEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (word.length < 3) continue;
    let hash = 7;
    for (const character of word) hash = (hash * 31 + character.charCodeAt(0)) >>> 0;
    vector[hash % dimensions] += 1;
  }
  const length = Math.hypot(...vector);
  if (length === 0) vector[0] = 1;
  return length === 0 ? vector : vector.map((value) => value / length);
}

/** OpenAI's `POST /embeddings` answer for `body`, or the scripted failure. */
export function writeEmbeddings(response: ServerResponse, body: Record<string, any>, reply: MockEmbeddingReply | undefined) {
  if (reply && 'status' in reply) {
    response.writeHead(reply.status, { 'content-type': 'application/json' });
    response.end(reply.body ?? JSON.stringify({ error: { message: 'scripted embeddings failure', type: 'server_error' } }));
    return;
  }
  const input: string[] = Array.isArray(body.input) ? body.input : [body.input];
  const dimensions = reply?.dimensions ?? body.dimensions ?? 1536;
  const tokens = input.reduce((sum, text) => sum + Math.ceil(String(text).length / 4), 0);
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      object: 'list',
      model: body.model,
      data: input.map((text, index) => ({ object: 'embedding', index, embedding: mockEmbedding(String(text), dimensions) })),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    }),
  );
}
