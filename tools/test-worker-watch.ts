/**
 * A test worker that leaves says why on its stderr, which the runner prints: a CI run once ended
 * with only the runner's "Channel closed" (its worker's IPC gone mid-run) and nothing on the cause.
 * A worker is shared between files (`isolate: false`), so the handlers are set once per process.
 */
const WATCHED = Symbol.for('hangar.test-worker-watch');
const worker = globalThis as { [WATCHED]?: true };

if (!worker[WATCHED]) {
  worker[WATCHED] = true;
  const say = (what: string) => process.stderr.write(`test worker ${process.pid}: ${what}\n`);
  process.on('disconnect', () => say('its channel to the runner closed'));
  process.on('exit', (code) => say(`exiting with code ${code}`));
}
