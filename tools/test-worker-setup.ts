import module from 'node:module';
import { afterAll } from 'vitest';
import { resetStartUpTally, startUpTally } from '../libs/testing/src/start-up-clock.js';

/**
 * Set up in every test file, in its own process (vitest.config.ts) but for the timed project's files, which share one.
 *
 * A forked test worker that leaves says why on its stderr, which the runner prints: a CI run once
 * ended with only the runner's "Channel closed" (its worker's IPC gone mid-run) and nothing on the
 * cause. One whose runner is gone ends at once: an orphan goes on reporting its errors to the closed
 * channel (vitest #11241; one here grew to its 4.3 GB heap limit beside the next run's tests).
 */
if (typeof process.send === 'function') {
  const say = (what: string) => process.stderr.write(`test worker ${process.pid}: ${what}\n`);
  process.on('disconnect', () => {
    say('its channel to the runner closed; ending');
    // process.exit throws inside a test run (the runner's guard); a signal ends the worker whatever runs.
    process.kill(process.pid, 'SIGKILL');
  });
  process.on('exit', (code) => say(`exiting with code ${code}`));
}

/** What the file waited for its Hangars and engines to start, for tools/timings-reporter.ts. */
// The timed project runs its files one after another in one fork: each file counts from zero.
resetStartUpTally();
afterAll((file) => {
  const { ms, count } = startUpTally();
  Object.assign(file.meta, { startUpMs: Math.round(ms), startUps: count });
  // Node writes its compile cache (NODE_COMPILE_CACHE, vitest.config.ts) at exit, which a fork ended by its pool may not reach.
  (module as { flushCompileCache?: () => void }).flushCompileCache?.();
});
