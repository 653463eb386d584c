// Preloaded (`node --import`) into the service processes a test spawns: a process whose parent is
// gone (a test worker ended before it stopped its shape, or was killed) exits instead of running on,
// orphaned, beside the next test's processes. Services themselves never watch their parent.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 500).unref();
