// Preloaded (`node --import`) into the service processes a test spawns: a process whose parent is
// gone (a test worker ended before it stopped its shape, or was killed) exits instead of running on,
// orphaned, beside the next test's processes. Services themselves never watch their parent.
import module from 'node:module';

const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 500).unref();

// Node writes its compile cache (NODE_COMPILE_CACHE, set by vitest.config.ts) when a process exits,
// and a test ends its processes with SIGKILL: what this one compiled while starting is written now,
// for the many processes of the same code that the run starts after it.
if (process.env.NODE_COMPILE_CACHE && module.flushCompileCache) {
  for (const afterMs of [5_000, 20_000]) setTimeout(() => module.flushCompileCache(), afterMs).unref();
}
