import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { joinedTextChunks, joiningTextChunks } from '../src/providers/joined-text-chunks.js';

/** Chat-completions streams through the joining transform, read by read, and through the AI SDK. */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}, id = 'c1') =>
  `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
const text = (content: string, id?: string) => chunk({ role: 'assistant', content }, {}, id);
const finish = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`;
const usage = `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })}\n\n`;
const done = 'data: [DONE]\n\n';

/** What the transform hands on for each read of `reads` (strings or raw bytes), one entry per read. */
async function throughJoin(reads: Array<string | Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  const transform = joinedTextChunks();
  const writer = transform.writable.getWriter();
  const reader = transform.readable.getReader();
  let pending: ReturnType<typeof reader.read> | undefined;
  for (const read of reads) {
    void writer.write(typeof read === 'string' ? encoder.encode(read) : read);
    // Whatever the read completed is handed on before the next read arrives.
    pending ??= reader.read();
    const next = await Promise.race([pending, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 20))]);
    if (next) pending = undefined;
    out.push(next?.value ? decoder.decode(next.value) : '');
  }
  void writer.close();
  for (let next = await (pending ?? reader.read()); !next.done; next = await reader.read()) out.push(decoder.decode(next.value));
  return out;
}

/** The events of an SSE text, each parsed (`[DONE]` as it is). */
const events = (sse: string) =>
  sse
    .split('\n\n')
    .filter(Boolean)
    .map((event) => (event === done.trim() ? event : JSON.parse(event.slice('data: '.length))));

describe('joinedTextChunks', () => {
  it('joins the text chunks of one read into one, with the first chunk’s metadata', async () => {
    const [read] = await throughJoin([text('Hel') + text('lo') + text(', world')]);
    expect(events(read)).toEqual([
      {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello, world' }, finish_reason: null }],
      },
    ]);
  });

  it('hands on each read’s chunks at once and never joins across reads', async () => {
    expect(await throughJoin([text('a') + text('b'), text('c')])).toEqual([
      `data: ${JSON.stringify(events(text('ab'))[0])}\n\n`,
      text('c'),
    ]);
  });

  it('passes every other chunk on unchanged and in order: tool calls, reasoning, finish, usage, [DONE]', async () => {
    const toolCall = chunk({ tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '{}' } }] });
    const reasoning = chunk({ reasoning_content: 'hmm' });
    const withLogprobs = `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta: { content: 'x' }, logprobs: { content: [] }, finish_reason: null }] })}\n\n`;
    const [read] = await throughJoin([
      text('a') + reasoning + text('b') + text('c') + toolCall + withLogprobs + text('d') + finish + usage + done,
    ]);
    expect(read).toBe(
      text('a') +
        reasoning +
        `data: ${JSON.stringify(events(text('bc'))[0])}\n\n` +
        toolCall +
        withLogprobs +
        text('d') +
        finish +
        usage +
        done,
    );
  });

  it('joins only chunks of the same answer (id, model and choice)', async () => {
    const secondChoice = `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 1, delta: { content: 'z' }, finish_reason: null }] })}\n\n`;
    const [read] = await throughJoin([text('a') + text('b', 'other') + secondChoice + text('c')]);
    expect(read).toBe(text('a') + text('b', 'other') + secondChoice + text('c'));
  });

  it('keeps an event cut between reads, and a character cut between its bytes, for the read that completes it', async () => {
    const whole = encoder.encode(text('é') + text('ü'));
    const cut = whole.indexOf(0xc3) + 1; // inside the two bytes of é
    const reads = await throughJoin([whole.slice(0, cut), whole.slice(cut)]);
    expect(reads[0]).toBe('');
    expect(events(reads.join(''))).toEqual(events(text('éü')));
  });

  it('hands on a stream whose lines end in \\r untouched, and an unfinished last event at the end', async () => {
    const crlf = text('a').replaceAll('\n', '\r\n') + text('b').replaceAll('\n', '\r\n');
    expect((await throughJoin([crlf, text('c') + text('d')])).join('')).toBe(crlf + text('c') + text('d'));
    expect((await throughJoin([text('a') + text('b') + 'data: {"unfinished'])).join('')).toBe(
      `data: ${JSON.stringify(events(text('ab'))[0])}\n\n` + 'data: {"unfinished',
    );
  });

  it('keeps a character cut between the read that finds \\r and the next one whole', async () => {
    const whole = encoder.encode(text('a').replaceAll('\n', '\r\n') + text('é').replaceAll('\n', '\r\n'));
    const cut = whole.indexOf(0xc3) + 1;
    expect((await throughJoin([whole.slice(0, cut), whole.slice(cut)])).join('')).toBe(decoder.decode(whole));
  });

  it('joins Azure’s chunks (content filter results on each), not a malformed chunk or one with a stop reason', async () => {
    const azure = (content: string) =>
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null, content_filter_results: { hate: { filtered: false } } }] })}\n\n`;
    expect(events((await throughJoin([azure('a') + azure('b')]))[0])).toHaveLength(1);
    const malformed = `data: ${JSON.stringify({ id: 'c1', created: 'x', model: 'm', choices: [{ index: 0, delta: { content: 'b' }, finish_reason: null }] })}\n\n`;
    const stopped = `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta: { content: 'c' }, finish_reason: null, stop_reason: 7 }] })}\n\n`;
    expect((await throughJoin([text('a') + malformed + stopped]))[0]).toBe(text('a') + malformed + stopped);
  });

  it('passes an event that is not one JSON data line on as it is', async () => {
    const odd = 'event: ping\ndata: {}\n\n' + ': comment\n\n' + 'data: not json\n\n';
    expect((await throughJoin([text('a') + odd + text('b')])).join('')).toBe(text('a') + odd + text('b'));
  });
});

describe('joiningTextChunks with the AI SDK', () => {
  /** A fetch answering every request with `reads`, one read at a time. */
  const answering = (reads: string[], init: ResponseInit = { headers: { 'content-type': 'text/event-stream' } }) =>
    (async () =>
      new Response(
        new ReadableStream({
          pull(controller) {
            const next = reads.shift();
            if (next === undefined) controller.close();
            else controller.enqueue(encoder.encode(next));
          },
        }),
        init,
      )) as unknown as typeof fetch;

  it('gives the SDK one text delta per read, the same text, finish reason and usage', async () => {
    const reads = [text('Hel') + text('lo'), text(' the') + text('re') + finish + usage + done];
    const model = createOpenAICompatible({
      name: 'm',
      baseURL: 'http://model.test/v1',
      includeUsage: true,
      fetch: joiningTextChunks(answering(reads)),
    })('m');
    const result = streamText({ model, prompt: 'hi' });
    const deltas: string[] = [];
    for await (const part of result.fullStream) if (part.type === 'text-delta') deltas.push(part.text);
    expect(deltas).toEqual(['Hello', ' there']);
    expect(await result.finishReason).toBe('stop');
    expect((await result.usage).totalTokens).toBe(7);
  });

  it('leaves an answer that is not an event stream, or a failed one, as it came', async () => {
    const json = answering(['{"error":{"message":"no"}}'], { status: 429, headers: { 'content-type': 'text/event-stream' } });
    const failed = await joiningTextChunks(json)('http://model.test');
    expect(failed.status).toBe(429);
    expect(await failed.text()).toBe('{"error":{"message":"no"}}');
    const plain = await joiningTextChunks(answering([text('a') + text('b')], { headers: { 'content-type': 'application/json' } }))(
      'http://model.test',
    );
    expect(await plain.text()).toBe(text('a') + text('b'));
  });
});
