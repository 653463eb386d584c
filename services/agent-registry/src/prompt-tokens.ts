import { Worker } from 'node:worker_threads';
import { HangarError } from '@hangar/platform';

/** Counts waiting at most; beyond, a count is refused (503) rather than queued without bound. */
const MAX_WAITING = 32;

type Reply = { id: number; tokens?: number[]; error?: string };

/**
 * The token counter's thread (prompt-tokens.worker.mjs), started on the first count: loading the
 * ranks takes ~0.7 s and a long prompt some more, and neither may hold this process's event loop.
 * Counts queue there one after another (at most MAX_WAITING); the thread does not keep the process alive.
 */
class TokenCounter {
  private readonly pending = new Map<number, { resolve: (tokens: number[]) => void; reject: (error: Error) => void }>();
  private nextId = 1;

  constructor(private readonly worker: Worker) {
    worker.unref();
    worker.on('message', (reply: Reply) => {
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.error !== undefined) waiting?.reject(new Error(`token count failed: ${reply.error}`));
      else waiting?.resolve(reply.tokens!);
    });
    // Heard, so a failing thread never ends the process: its counts fail, and the next count starts a new one.
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`the token counter's thread exited (code ${code})`)));
  }

  count(texts: string[]): Promise<number[]> {
    if (this.pending.size >= MAX_WAITING)
      return Promise.reject(new HangarError('unavailable', 'the token counter is busy; try again shortly', {}, 'service_unavailable'));
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts });
    });
  }

  private fail(error: Error) {
    if (counter === this) counter = undefined;
    for (const waiting of this.pending.values())
      waiting.reject(new HangarError('unavailable', `prompt tokens could not be counted: ${error.message}`, {}, 'service_unavailable'));
    this.pending.clear();
  }
}

let counter: TokenCounter | undefined;

/** Tokens of each text by the reference tokenizer (o200k_base), counted off this thread. */
export function countTokens(texts: string[]): Promise<number[]> {
  counter ??= new TokenCounter(new Worker(new URL('./prompt-tokens.worker.mjs', import.meta.url)));
  return counter.count(texts);
}
