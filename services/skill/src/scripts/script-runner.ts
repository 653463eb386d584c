import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createScriptSlots } from './concurrency.js';

export interface ScriptRunnerSettings {
  /** Extension (with or without the dot) → command line, e.g. { sh: '/bin/sh', '.py': 'python3 -I' } (Skills:Scripts:Interpreters). */
  interpreters: Record<string, string>;
  /** Skills:Scripts:EnvironmentAllowList: only these variables of the service's environment reach the script. */
  environmentAllowList: string[];
  /** Skills:Scripts:Timeout: then the whole process group is killed. */
  timeoutMs: number;
  /** Skills:Scripts:MaxOutputBytes: stdout and stderr together; at the cap reading stops and the process group is killed. */
  maxOutputBytes: number;
  /** Skills:Scripts:MaxArgumentBytes: UTF-8 bytes of the arguments and stdin together. */
  maxArgumentBytes: number;
  /** Skills:Scripts:MaxConcurrentPerTenant */
  maxConcurrentPerTenant: number;
  /** Skills:Scripts:MaxConcurrentTotal */
  maxConcurrentTotal: number;
  /** How long a call waits for a free slot before it is refused with a clear error. */
  concurrencyWaitMs: number;
}

export interface Script {
  tenantId: string;
  skillName: string;
  scriptName: string;
  /** Without the dot, e.g. 'sh'. */
  extension: string;
  /** Either the stored content (written to a private temp file for the run, removed after) or a file on disk (on-disk skills). */
  source: { content: string } | { path: string };
}

export interface ScriptInput {
  /** Passed to the script after its path, as separate arguments (no shell). */
  args?: string[];
  /** Written to the script's stdin, which is then closed (closed at once when absent). */
  stdin?: string;
  /** Called on the script's first output byte, stdout or stderr (latency measurements). */
  onFirstOutput?: () => void;
}

/** stdout and stderr are kept apart; together they hold at most maxOutputBytes, cut between UTF-8 characters. */
export interface ScriptResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** The output reached maxOutputBytes and the process group was killed. */
  truncated: boolean;
  /** The script ran past timeoutMs and the process group was killed. */
  timedOut: boolean;
  /** From spawn to the end of the output, not counting the wait for a slot. */
  durationMs: number;
}

export class ScriptRefused extends Error {
  constructor(
    readonly reason: 'no_interpreter' | 'arguments_too_large' | 'busy',
    message: string,
  ) {
    super(message);
    this.name = 'ScriptRefused';
  }
}

export type ScriptRunner = ReturnType<typeof createScriptRunner>;

/**
 * Runs skill scripts as subprocesses: each leads its own process group, so a timeout, an abort
 * or the output cap kills the script together with everything it started, and whatever is left
 * running when the script exits is killed too.
 */
export function createScriptRunner(settings: ScriptRunnerSettings) {
  const interpreters = interpreterTable(settings.interpreters);
  // Read once, like the rest of the configuration.
  const environment = Object.fromEntries(
    settings.environmentAllowList.flatMap((name) => {
      const value = process.env[name];
      return value === undefined ? [] : [[name, value] as const];
    }),
  );
  const slots = createScriptSlots({ perTenant: settings.maxConcurrentPerTenant, total: settings.maxConcurrentTotal });
  let spawned = 0;

  function interpreterFor(extension: string): string[] | undefined {
    const command = interpreters.get(withoutDot(extension));
    return command && [...command];
  }

  function runProcess(command: string[], cwd: string, input: ScriptInput, signal: AbortSignal | undefined): Promise<ScriptResult> {
    return new Promise((resolveResult, reject) => {
      const started = performance.now();
      spawned += 1;
      const child = spawn(command[0], command.slice(1), { cwd, env: environment, detached: true, shell: false, stdio: 'pipe' });
      const output = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
      let outputBytes = 0;
      let truncated = false;
      let timedOut = false;
      let onFirstOutput = input.onFirstOutput;
      let settled = false;

      const killGroup = () => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch (error) {
          // ESRCH: the group is gone already. EPERM: only processes we may not signal are left (a setuid program).
          if (!['ESRCH', 'EPERM'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
        }
      };
      const stopReading = () => {
        child.stdout.destroy();
        child.stderr.destroy();
      };
      const stop = () => {
        killGroup();
        // The script is gone but something that left its group holds the pipes open: stop waiting for it.
        if (child.exitCode !== null || child.signalCode !== null) stopReading();
      };
      const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
        onFirstOutput?.();
        onFirstOutput = undefined;
        if (truncated) return;
        const room = settings.maxOutputBytes - outputBytes;
        if (chunk.length > room) {
          chunk = chunk.subarray(0, utf8Boundary(chunk, room));
          truncated = true;
        }
        output[stream].push(chunk);
        outputBytes += chunk.length;
        if (truncated) {
          killGroup();
          stopReading();
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, settings.timeoutMs);
      const settle = () => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', stop);
      };

      child.stdout.on('data', collect('stdout'));
      child.stderr.on('data', collect('stderr'));
      // EPIPE when the script exits without reading its stdin: not the script's failure to report.
      child.stdin.on('error', () => {});
      child.stdin.end(input.stdin);
      // Background processes the script left behind would outlive its slot. One that left the group
      // may still hold the pipes: once the script was stopped (timeout, abort, output cap), stop reading too.
      child.once('exit', () => {
        killGroup();
        if (timedOut || truncated || signal?.aborted) stopReading();
      });
      child.on('error', (error) => {
        if (settled || child.pid !== undefined) return;
        settle();
        reject(new Error(`the script could not be started with ${command[0]} in ${cwd}: ${error.message}`, { cause: error }));
      });
      child.once('close', (exitCode, exitSignal) => {
        if (settled) return;
        settle();
        resolveResult({
          exitCode,
          signal: exitSignal,
          stdout: Buffer.concat(output.stdout).toString('utf8'),
          stderr: Buffer.concat(output.stderr).toString('utf8'),
          truncated,
          timedOut,
          durationMs: performance.now() - started,
        });
      });
      signal?.addEventListener('abort', stop, { once: true });
      if (signal?.aborted) stop();
    });
  }

  return {
    /**
     * Refuses (ScriptRefused) when no interpreter is configured for the extension, the arguments
     * are over the limit, or no slot comes free within concurrencyWaitMs. A non-zero exit is a
     * result. Aborting `signal` before the script starts rejects with its reason; after, it kills
     * the process group and the result carries signal SIGKILL.
     */
    async run(script: Script, input: ScriptInput, signal?: AbortSignal): Promise<ScriptResult> {
      const command = interpreterFor(script.extension);
      if (!command) {
        throw new ScriptRefused('no_interpreter', `no interpreter is configured for .${withoutDot(script.extension)} scripts`);
      }
      const argumentBytes = [...(input.args ?? []), input.stdin ?? ''].reduce((bytes, text) => bytes + Buffer.byteLength(text), 0);
      if (argumentBytes > settings.maxArgumentBytes) {
        throw new ScriptRefused(
          'arguments_too_large',
          `the arguments and stdin of script ${script.scriptName} take ${argumentBytes} bytes, over the limit of ${settings.maxArgumentBytes}`,
        );
      }
      const release = await slots.acquire(script.tenantId, settings.concurrencyWaitMs, signal);
      if (!release) {
        throw new ScriptRefused(
          'busy',
          `no script slot came free within ${settings.concurrencyWaitMs} ms ` +
            `(at most ${settings.maxConcurrentPerTenant} scripts per tenant and ${settings.maxConcurrentTotal} in all run at once)`,
        );
      }
      try {
        return await withScriptFile(script, (path) => runProcess([...command, path, ...(input.args ?? [])], dirname(path), input, signal));
      } finally {
        release();
      }
    },
    /** Processes spawned since creation. */
    spawnCount: () => spawned,
    /** Interpreter command for an extension (with or without the dot), or undefined. */
    interpreterFor,
  };
}

/** Stored content goes to a file in a private temp dir, removed after the run whatever happened. */
async function withScriptFile<T>(script: Script, use: (path: string) => Promise<T>): Promise<T> {
  if ('path' in script.source) return use(resolve(script.source.path));
  const directory = await mkdtemp(join(tmpdir(), 'hangar-script-'));
  try {
    // Separators replaced, so no script name reaches outside the private dir.
    const path = join(directory, `${script.scriptName.replace(/[/\\\0]/g, '_')}.${withoutDot(script.extension)}`);
    await writeFile(path, script.source.content, { mode: 0o700 });
    return await use(path);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

const withoutDot = (extension: string) => extension.replace(/^\./, '');

/** Skills:Scripts:Interpreters as extension (without the dot) → command line split on whitespace; empty lines left out. */
export function interpreterTable(interpreters: Record<string, string>): Map<string, string[]> {
  return new Map(
    Object.entries(interpreters)
      .map(([extension, commandLine]) => [withoutDot(extension), commandLine.trim().split(/\s+/).filter(Boolean)] as const)
      .filter(([, command]) => command.length > 0),
  );
}

/** The largest cut at or below `limit` that does not split a UTF-8 character. */
function utf8Boundary(bytes: Buffer, limit: number): number {
  let cut = limit;
  while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) cut -= 1;
  return cut;
}
