import { isMainThread } from 'node:worker_threads';

/**
 * A forked test worker that leaves says why on its stderr, which the runner prints: a CI run once
 * ended with only the runner's "Channel closed" (its worker's IPC gone mid-run) and nothing on the
 * cause. One whose runner is gone ends at once: an orphan goes on reporting its errors to the closed
 * channel (vitest #11241; one here grew to its 4.3 GB heap limit beside the next run's tests).
 * Set once per process (a setup file runs before each file a worker runs).
 */
const WATCHED = Symbol.for('hangar.test-worker-watch');
const worker = globalThis as { [WATCHED]?: true };

if (isMainThread && typeof process.send === 'function' && !worker[WATCHED]) {
  worker[WATCHED] = true;
  const say = (what: string) => process.stderr.write(`test worker ${process.pid}: ${what}\n`);
  process.on('disconnect', () => {
    say('its channel to the runner closed; ending');
    // process.exit throws inside a test run (the runner's guard); a signal ends the worker whatever runs.
    process.kill(process.pid, 'SIGKILL');
  });
  process.on('exit', (code) => say(`exiting with code ${code}`));
}
