// The embedded store's thread: one PGlite, driven by messages from PGliteWorker (pglite-worker-client.ts).
// Plain JavaScript on purpose: a worker thread starts without the parent's TypeScript loader under
// vitest (and PGliteWorker drops tsx's, which would cost a loader thread), so a .ts file would not load.
//
// PGlite is a single backend, so the lock of its one connection lives here, where it costs no round
// trip: queries run in the order they arrive, except that once a connection's query leaves the
// backend inside a transaction block, only that connection's queries run until the block ends
// (commit or rollback); the others wait here. A connection released inside a transaction (its
// commit or rollback never came) is rolled back, so the backend is never left to the next one mid-transaction.
// Every reply says whether a transaction block is open, so the client sends a release only then.
import { readFile } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

/** @type {PGlite} */
let pglite;
/** Queries and releases not yet run, in arrival order. @type {object[]} */
const queue = [];
/** The connection whose transaction block is open, if any. @type {number | undefined} */
let owner;
let running = false;
let closing = false;

/** A DatabaseError's fields (code, detail, constraint...) are own properties that structured clone would drop. */
function serializeError(error) {
  if (!(error instanceof Error)) return { message: String(error), fields: {} };
  const fields = {};
  for (const [key, value] of Object.entries(error)) {
    if (value === undefined || ['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return { message: error.message, name: error.name, stack: error.stack, fields };
}

function next() {
  const index = owner === undefined ? 0 : queue.findIndex((message) => message.conn === owner);
  return index < 0 || queue.length === 0 ? undefined : queue.splice(index, 1)[0];
}

async function pump() {
  if (running) return;
  running = true;
  try {
    for (let message = next(); message; message = next()) {
      if (message.type === 'release') {
        if (message.conn === owner) {
          owner = undefined;
          if (pglite.isInTransaction()) await pglite.query('rollback').catch(() => {});
        }
        continue;
      }
      let reply;
      try {
        const result = await pglite.query(message.sql, message.params);
        reply = { id: message.id, rows: result.rows, affectedRows: result.affectedRows };
      } catch (error) {
        reply = { id: message.id, error: serializeError(error) };
      }
      // The client tells of a release only for a connection whose last query left a block open.
      const inTransaction = pglite.isInTransaction();
      owner = inTransaction ? message.conn : undefined;
      parentPort.postMessage({ ...reply, inTransaction });
    }
  } finally {
    running = false;
  }
}

async function close(id) {
  closing = true;
  // Queries waiting for a transaction that will not end are answered by the main thread.
  while (running) await new Promise((resolve) => setImmediate(resolve));
  try {
    await pglite.close();
    parentPort.postMessage({ id });
  } catch (error) {
    parentPort.postMessage({ id, error: serializeError(error) });
  }
  // With the port closed nothing holds the thread: it ends by itself, where no WASM runs. The
  // client terminates it only if it does not (a thread terminated amid WASM has crashed Node).
  parentPort.close();
}

// Messages come in batches: what the client sent in one turn of its event loop.
parentPort.on('message', (batch) => {
  for (const message of batch) {
    if (closing) return;
    if (message.type === 'close') {
      // What came before the close in its batch runs first (close waits for the pump).
      void pump();
      void close(message.id);
      return;
    }
    queue.push(message);
  }
  void pump();
});

try {
  // pgvector for the knowledge service (no start time measurably added: ~1.2–1.4 s either way).
  // A seed is an image of a data directory: loading it skips initdb (3–5 s here, the image ~1 s).
  const loadDataDir = workerData.seed ? new Blob([await readFile(workerData.seed)]) : undefined;
  pglite = await PGlite.create(workerData.dataDir, { extensions: { vector }, loadDataDir });
  parentPort.postMessage({ ready: true });
} catch (error) {
  parentPort.postMessage({ ready: false, error: serializeError(error) });
}
