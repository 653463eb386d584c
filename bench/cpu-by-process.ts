import { readdirSync, readFileSync } from 'node:fs';
import { processStat } from './hot-path/processes.js';

/** A process's command name and CPU seconds, or undefined when it is gone. */
function statOf(pid: number) {
  try {
    return processStat(pid);
  } catch {
    return undefined;
  }
}

/** Busy and all ticks of the whole machine (the first line of /proc/stat). */
function machineTicks() {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal (guest time is counted in user and nice already)
  const ticks = values.slice(0, 8).map(Number);
  const idle = ticks[3] + ticks[4]; // idle + iowait
  const all = ticks.reduce((sum, value) => sum + value, 0);
  return { busy: all - idle, all };
}

/**
 * Where a machine's CPU went during a window, per named process (`named`: pid → label, e.g. the
 * Hangar services) and per command name for everything else (postgres backends, Kafka's java,
 * redis-server), so that a throughput figure says what each run cost and who spent it. Whatever
 * else runs on the machine is counted too, under its command name; a process that exited within the
 * window is not.
 */
export function cpuAccount(named: Map<number, string>) {
  const snapshot = () => {
    const byPid = new Map<number, { label: string; seconds: number }>();
    for (const entry of readdirSync('/proc')) {
      const pid = Number(entry);
      if (!Number.isInteger(pid)) continue;
      const found = statOf(pid);
      if (found) byPid.set(pid, { label: named.get(pid) ?? found.comm, seconds: found.cpuSeconds });
    }
    return { byPid, machine: machineTicks() };
  };
  const before = snapshot();
  return {
    /** CPU ms per unit of work by label (largest first) and the machine's busy share over the window. */
    finish(units: number) {
      if (units <= 0) throw new Error('no unit of work was completed in the window');
      const after = snapshot();
      const byLabel = new Map<string, number>();
      for (const [pid, now] of after.byPid) {
        const spent = now.seconds - (before.byPid.get(pid)?.seconds ?? 0); // a process started in the window counts whole
        if (spent > 0) byLabel.set(now.label, (byLabel.get(now.label) ?? 0) + spent);
      }
      const perUnit = [...byLabel].map(([label, seconds]) => ({ label, ms: (seconds * 1000) / units })).sort((a, b) => b.ms - a.ms);
      const busy = after.machine.busy - before.machine.busy;
      return { perUnit, machineBusy: busy / (after.machine.all - before.machine.all) };
    },
  };
}

/** One line: `total 9.8 ms CPU per run (machine 97% busy): RunExecutor 3.1, postgres 2.2, …` (labels under 0.05 ms left out). */
export function describeCpuAccount({ perUnit, machineBusy }: ReturnType<ReturnType<typeof cpuAccount>['finish']>, unit: string) {
  const total = perUnit.reduce((sum, { ms }) => sum + ms, 0);
  const parts = perUnit.filter(({ ms }) => ms >= 0.05).map(({ label, ms }) => `${label} ${ms.toFixed(2)}`);
  return `${total.toFixed(2)} ms CPU per ${unit} (machine ${(machineBusy * 100).toFixed(0)}% busy): ${parts.join(', ')}`;
}
