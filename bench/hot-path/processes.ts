import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ScriptProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Runs a bench helper (`node --import tsx <file>`) in its own process; it prints `{"url": ...}` once listening. */
export async function spawnScript(file: string, env: Record<string, string> = {}): Promise<ScriptProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(file, import.meta.url))], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const firstLine = await Promise.race([
    new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)),
    exited.then(() => Promise.reject(new Error(`${file} exited before listening`))),
  ]);
  return { url: (JSON.parse(firstLine) as { url: string }).url, child, stop: () => stopChild(child, exited) };
}

/** SIGTERM, then SIGKILL when the process has not exited within `graceMs`. */
export async function stopChild(child: ChildProcess, exited: Promise<unknown>, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** Resident memory of a process in kB (`VmRSS` of /proc/<pid>/status). */
export function rssKb(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : Number.NaN;
}

const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/** A process's command name and the CPU seconds it used so far (comm, utime + stime of /proc/<pid>/stat). */
export function processStat(pid: number): { comm: string; cpuSeconds: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd on (state)
  return {
    comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
  };
}

/** CPU seconds used so far by a process. */
export const cpuSeconds = (pid: number) => processStat(pid).cpuSeconds;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** NODE_OPTIONS that preload gc-on-signal.mjs (SIGUSR2 → a full garbage collection) into a process. */
export const gcOnSignalNodeOptions = () =>
  `${process.env.NODE_OPTIONS ?? ''} --import=${new URL('./gc-on-signal.mjs', import.meta.url).href}`.trim();

/** RSS in kB after a full garbage collection (the process must preload gc-on-signal.mjs). */
export async function rssAfterGcKb(pid: number): Promise<number> {
  for (let round = 0; round < 2; round += 1) {
    process.kill(pid, 'SIGUSR2');
    await sleep(750);
  }
  return rssKb(pid);
}
