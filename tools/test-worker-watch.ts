/**
 * A forked test worker that leaves says why on its stderr, which the runner prints: a CI run once
 * ended with only the runner's "Channel closed" (its worker's IPC gone mid-run) and nothing on the
 * cause. One whose runner is gone ends at once: an orphan goes on reporting its errors to the closed
 * channel (vitest #11241; one here grew to its 4.3 GB heap limit beside the next run's tests).
 * Each file has a process of its own (vitest.config.ts), so these are set once per process.
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
