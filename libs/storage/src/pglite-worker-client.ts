import { Worker } from 'node:worker_threads';

/** How long a closing thread may take to end by itself before it is terminated. */
const CLOSE_GRACE_MS = 10_000;

export interface EmbeddedQueryResult<R> {
  rows: R[];
  affectedRows?: number;
}

/** A connection to the embedded store: its queries run in order, and inside a transaction block no other connection's in between. */
export interface EmbeddedConnection {
  query<R>(sql: string, params: readonly unknown[]): Promise<EmbeddedQueryResult<R>>;
  release(): void;
}

interface SerializedError {
  message: string;
  name?: string;
  stack?: string;
  fields: Record<string, unknown>;
}

type Reply =
  | { ready: true }
  | { ready: false; error: SerializedError }
  | { id: number; rows?: unknown[]; affectedRows?: number; error?: SerializedError; inTransaction: boolean };

/**
 * PGlite in its own thread (pglite-worker.mjs), so its WASM and protocol code run on another core
 * than express, gRPC and the runs. The lock of its single backend is kept in that thread: see there.
 *
 * Messages sent in one turn of the event loop cross together (one `postMessage` per batch: a
 * call costs more than cloning a query). Values cross by structured clone, which keeps what
 * PGlite returns and takes (Date, Uint8Array, bigint, plain objects and arrays; a Buffer parameter
 * arrives as a Uint8Array). Errors are sent as their fields and rebuilt here, with the SQLSTATE
 * `code`, `detail`, `constraint`... intact. If the thread dies, every pending and later query
 * fails with SQLSTATE 08006 (connection failure), which the edge reports as unavailable.
 */
export class PGliteWorker {
  private readonly pending = new Map<number, { resolve: (reply: unknown) => void; reject: (error: Error) => void }>();
  /** Messages not yet handed to the thread; sent together once the current turn's code has run. */
  private outgoing: Array<Record<string, unknown>> = [];
  private nextId = 1;
  private nextConnection = 1;
  private failure: Error | undefined;
  private closed: Promise<void> | undefined;
  private closing = false;
  private exited = false;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (reply: Reply) => {
      if (!('id' in reply)) return;
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      this.idleUnlessPending();
      if (reply.error) waiting.reject(Object.assign(rebuildError(reply.error), { inTransaction: reply.inTransaction }));
      else waiting.resolve(reply);
    });
    // Heard, so a failing thread never ends the process: its queries fail instead.
    worker.on('error', (error) => this.fail(error));
    worker.on('messageerror', (error) => this.fail(error));
    worker.on('exit', (code) => {
      this.exited = true;
      this.fail(new Error(this.closing ? 'the embedded store is closed' : `the embedded store's thread exited (code ${code})`));
    });
  }

  /** `seed`: the path of a data directory image (PGlite's `dumpDataDir`) the store starts from, instead of initdb. */
  static async create(dataDir: string, seed?: string): Promise<PGliteWorker> {
    const worker = new Worker(new URL('./pglite-worker.mjs', import.meta.url), {
      workerData: { dataDir, seed },
      // The worker is plain JavaScript: the parent's module loaders (tsx) would only cost it a loader thread.
      execArgv: withoutLoaders(process.execArgv),
    });
    const client = new PGliteWorker(worker);
    await new Promise<void>((resolve, reject) => {
      const onReply = (reply: Reply) => {
        if (!('ready' in reply)) return;
        worker.off('message', onReply);
        worker.off('exit', onExit);
        if (reply.ready) resolve();
        else reject(rebuildError(reply.error));
      };
      const onExit = () => {
        worker.off('message', onReply);
        reject(client.failure ?? new Error("the embedded store's thread exited while starting"));
      };
      worker.on('message', onReply);
      worker.once('exit', onExit);
    }).catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });
    worker.unref();
    return client;
  }

  /**
   * A connection to the store's single backend. Its queries run in order; once one opens a
   * transaction block, no other connection's query runs until the block ends (see pglite-worker.mjs).
   */
  connect(): EmbeddedConnection {
    const conn = this.nextConnection++;
    // Whether this connection's last query left a transaction block open: only then does its release tell the thread.
    let inTransaction = false;
    let released = false;
    return {
      query: async <R>(sql: string, params: readonly unknown[]) => {
        try {
          const reply = await this.request<EmbeddedQueryResult<R> & { inTransaction: boolean }>({ type: 'query', conn, sql, params });
          inTransaction = reply.inTransaction;
          return reply;
        } catch (error) {
          inTransaction = (error as { inTransaction?: boolean }).inTransaction ?? inTransaction;
          throw error;
        }
      },
      release: () => {
        if (released) return;
        released = true;
        if (inTransaction) this.post({ type: 'release', conn });
      },
    };
  }

  /**
   * Closes PGlite (its files are consistent afterwards) and lets the thread end by itself once its
   * current query is done: terminating a thread amid WASM has crashed Node. Only a thread that has
   * not ended CLOSE_GRACE_MS after being asked is terminated.
   */
  close(): Promise<void> {
    this.closed ??= (async () => {
      try {
        this.closing = true;
        if (!this.failure) await this.request({ type: 'close' }, true);
        else if (!this.exited) this.askToClose();
      } finally {
        await this.ended();
        this.fail(new Error('the embedded store is closed'));
      }
    })();
    return this.closed;
  }

  /** A thread that failed but still runs (a message it could not read) is asked to close all the same. */
  private askToClose() {
    try {
      this.worker.postMessage([{ type: 'close', id: 0 }]);
    } catch {
      // A port that cannot take a message: the grace period ends in terminate.
    }
  }

  private async ended(): Promise<void> {
    if (this.exited) return;
    const exit = new Promise((resolve) => this.worker.once('exit', resolve));
    const grace = setTimeout(() => void this.worker.terminate(), CLOSE_GRACE_MS);
    await exit;
    clearTimeout(grace);
  }

  private request<T>(message: Record<string, unknown>, evenWhenClosing = false): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing && !evenWhenClosing)
      return Promise.reject(Object.assign(new Error('the embedded store is closed'), { code: '08006' }));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (reply: unknown) => void, reject });
      // The thread keeps the process alive only while an answer is awaited.
      if (this.pending.size === 1) this.worker.ref();
      this.post({ ...message, id });
    });
  }

  private post(message: Record<string, unknown>) {
    if (this.failure) return;
    this.outgoing.push(message);
    if (this.outgoing.length === 1) queueMicrotask(() => this.flush());
  }

  private flush() {
    const batch = this.outgoing;
    this.outgoing = [];
    if (this.failure || !batch.length) return;
    try {
      this.worker.postMessage(batch);
    } catch {
      // A parameter structured clone cannot copy (a function, a symbol) fails its own query only.
      for (const message of batch) {
        try {
          this.worker.postMessage([message]);
        } catch (error) {
          this.settleUnsent(message, error as Error);
        }
      }
    }
  }

  private settleUnsent(message: Record<string, unknown>, error: Error) {
    const waiting = typeof message.id === 'number' ? this.pending.get(message.id) : undefined;
    if (!waiting) return;
    this.pending.delete(message.id as number);
    this.idleUnlessPending();
    waiting.reject(error);
  }

  private idleUnlessPending() {
    if (this.pending.size === 0) this.worker.unref();
  }

  private fail(cause: Error) {
    if (!this.failure) {
      this.failure = Object.assign(new Error(cause.message, { cause }), { code: '08006' });
    }
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.worker.unref();
    for (const { reject } of waiting) reject(this.failure);
  }
}

function rebuildError({ message, name, stack, fields }: SerializedError): Error {
  const error = new Error(message);
  Object.assign(error, fields);
  if (name !== undefined) error.name = name;
  // Where it was thrown (the worker) and where it was awaited (here).
  if (stack) error.stack = `${stack}\n    --- awaited at ---${(new Error().stack ?? '').replace(/^Error.*\n/, '\n')}`;
  return error;
}

function withoutLoaders(execArgv: string[]): string[] {
  const loaders = ['--import', '--loader', '--experimental-loader', '--require', '-r'];
  const kept: string[] = [];
  for (let index = 0; index < execArgv.length; index++) {
    const arg = execArgv[index];
    if (loaders.includes(arg)) index++;
    else if (!loaders.some((flag) => arg.startsWith(`${flag}=`))) kept.push(arg);
  }
  return kept;
}
