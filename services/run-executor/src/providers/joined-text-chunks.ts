/**
 * A fetch for chat-completions models whose streamed answers come with their text chunks joined:
 * of the server-sent events that arrived in one read, consecutive chunks that carry nothing but
 * text of the same answer become one chunk with the texts joined. The AI SDK pays per chunk
 * (an event parse, a schema check and a stream part each, about 30,000 chunks/s on this
 * machine's core), so a model that streams faster than that reaches the run as fewer, larger
 * deltas, as `coalescedTextDeltas` does one step later. Nothing waits for company: only what one
 * read delivered is joined, and what a read delivered whole goes on at once. Every other event
 * (a tool call, reasoning, a finish reason, usage, an error, `[DONE]`) goes on unchanged and in
 * order; a stream that is not plain `data:` lines ending in `\n` is passed on untouched.
 */
export function joiningTextChunks(fetch: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.ok || !response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
    return new Response(response.body.pipeThrough(joinedTextChunks()), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** Chunk fields that say nothing about its content (the first chunk of a run of them is kept). */
const CHUNK_FIELDS = new Set(['id', 'object', 'created', 'model', 'choices', 'usage', 'system_fingerprint', 'service_tier', 'obfuscation']);
// Azure's content filter results and vLLM's stop reason ride on every chunk; the SDK reads neither.
const CHOICE_FIELDS = new Set(['index', 'delta', 'finish_reason', 'logprobs', 'content_filter_results', 'stop_reason']);
const optional = (value: unknown, type: 'string' | 'number') => value == null || typeof value === type;

interface TextChunk {
  /** Which answer the text belongs to: chunks join only with chunks of the same one. */
  answer: string;
  chunk: { choices: [{ delta: { content: string } }] };
}

/** The chunk, when it carries nothing but text (no tool call, reasoning, finish, usage or logprobs). */
function textChunk(data: string): TextChunk | undefined {
  let chunk: any;
  try {
    chunk = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof chunk !== 'object' || chunk === null || chunk.usage != null || !Array.isArray(chunk.choices) || chunk.choices.length !== 1)
    return undefined;
  for (const field in chunk) if (!CHUNK_FIELDS.has(field)) return undefined;
  // What the SDK checks of a chunk it is given whole: a malformed one is left for it to refuse.
  if (!optional(chunk.id, 'string') || !optional(chunk.model, 'string') || !optional(chunk.created, 'number')) return undefined;
  const choice = chunk.choices[0];
  if (typeof choice !== 'object' || choice === null || choice.finish_reason != null || choice.logprobs != null) return undefined;
  if (choice.stop_reason != null || !optional(choice.index, 'number')) return undefined;
  for (const field in choice) if (!CHOICE_FIELDS.has(field)) return undefined;
  const delta = choice.delta;
  if (typeof delta !== 'object' || delta === null || typeof delta.content !== 'string') return undefined;
  for (const field in delta) if (field !== 'content' && !(field === 'role' && delta.role === 'assistant')) return undefined;
  return { answer: `${chunk.id}\u0000${chunk.model}\u0000${choice.index}`, chunk };
}

const DATA = 'data:';

/** The server-sent events of each read with their text chunks joined (see joiningTextChunks). */
export function joinedTextChunks(): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  let untouched = false;

  function joined(events: string[]): string {
    let out = '';
    let run: { first: TextChunk; raw: string; texts: string[] } | undefined;
    const endRun = () => {
      if (!run) return;
      if (run.texts.length === 1) out += run.raw;
      else {
        run.first.chunk.choices[0].delta.content = run.texts.join('');
        out += `data: ${JSON.stringify(run.first.chunk)}\n\n`;
      }
      run = undefined;
    };
    for (const event of events) {
      const raw = `${event}\n\n`;
      const text = event.startsWith(DATA) && !event.includes('\n') ? textChunk(event.slice(DATA.length)) : undefined;
      if (text && run && text.answer === run.first.answer) {
        run.texts.push(text.chunk.choices[0].delta.content);
        continue;
      }
      endRun();
      if (text) run = { first: text, raw, texts: [text.chunk.choices[0].delta.content] };
      else out += raw;
    }
    endRun();
    return out;
  }

  return new TransformStream({
    transform(bytes, controller) {
      const text = decoder.decode(bytes, { stream: true });
      // Decoded still: the decoder may hold the first bytes of a character cut between reads.
      if (untouched) return controller.enqueue(encoder.encode(text));
      // Lines may also end in \r (SSE allows it): such a stream is not ours to rewrite.
      if (text.includes('\r')) {
        untouched = true;
        controller.enqueue(encoder.encode(pending + text));
        pending = '';
        return;
      }
      // Only the new text (and the character before it) can complete an event: a long one is not searched again per read.
      const searchFrom = Math.max(0, pending.length - 1);
      pending += text;
      if (pending.indexOf('\n\n', searchFrom) < 0) return;
      const end = pending.lastIndexOf('\n\n');
      const events = pending.slice(0, end).split('\n\n');
      pending = pending.slice(end + 2);
      controller.enqueue(encoder.encode(joined(events)));
    },
    flush(controller) {
      const rest = pending + decoder.decode();
      if (rest) controller.enqueue(encoder.encode(rest));
    },
  });
}
