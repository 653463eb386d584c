import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createScriptRunner, ScriptRefused, type Script, type ScriptRunnerSettings } from '../src/scripts/script-runner.js';

const settings: ScriptRunnerSettings = {
  interpreters: { sh: '/bin/sh', '.py': 'python3 -I' },
  environmentAllowList: ['PATH'],
  timeoutMs: 10_000,
  maxOutputBytes: 1024 * 1024,
  maxArgumentBytes: 64 * 1024,
  maxConcurrentPerTenant: 4,
  maxConcurrentTotal: 8,
  concurrencyWaitMs: 5_000,
};

const shell = (content: string, tenantId = 'tenant-a'): Script => ({
  tenantId,
  skillName: 'demo',
  scriptName: 'greet',
  extension: 'sh',
  source: { content },
});

/** Aborted after each test, so a failed test leaves no `sleep 30` behind. */
const longRunning: AbortController[] = [];
function stopLater() {
  const controller = new AbortController();
  longRunning.push(controller);
  return controller;
}
afterEach(() => longRunning.splice(0).forEach((controller) => controller.abort()));

/** This machine's init does not reap orphans, so a killed grandchild may stay a zombie: dead all the same. */
function isDead(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
  } catch (error) {
    if (['ESRCH', 'ENOENT'].includes((error as NodeJS.ErrnoException).code ?? '')) return true;
    throw error;
  }
}

describe('the script runner', () => {
  it('returns stdout and exit code 0, and a non-zero exit as a result', async () => {
    const runner = createScriptRunner(settings);
    const ok = await runner.run(shell('echo hello'), {});
    expect(ok).toMatchObject({ exitCode: 0, signal: null, stdout: 'hello\n', stderr: '', truncated: false, timedOut: false });
    const failed = await runner.run(shell('echo oops >&2; exit 3'), {});
    expect(failed).toMatchObject({ exitCode: 3, stdout: '', stderr: 'oops\n' });
  });

  it('passes args and stdin, and refuses arguments over maxArgumentBytes before spawning', async () => {
    const runner = createScriptRunner({ ...settings, maxArgumentBytes: 32 });
    const result = await runner.run(shell(`printf '%s|' "$@"; cat`), { args: ['one', 'two words', '$HOME'], stdin: 'from stdin' });
    expect(result.stdout).toBe('one|two words|$HOME|from stdin');

    // 25 characters but 33 UTF-8 bytes: the limit is in bytes.
    const refused = runner.run(shell('echo never'), { args: ['é'.repeat(8)], stdin: 'x'.repeat(17) });
    await expect(refused).rejects.toBeInstanceOf(ScriptRefused);
    await expect(refused).rejects.toMatchObject({ reason: 'arguments_too_large' });
    expect(runner.spawnCount()).toBe(1);
  });

  it('refuses an extension without an interpreter, and finds interpreters with or without the dot', async () => {
    const runner = createScriptRunner(settings);
    await expect(runner.run({ ...shell('puts 1'), extension: 'rb' }, {})).rejects.toMatchObject({ reason: 'no_interpreter' });
    expect(runner.spawnCount()).toBe(0);
    expect(runner.interpreterFor('py')).toEqual(['python3', '-I']);
    expect(runner.interpreterFor('.sh')).toEqual(['/bin/sh']);
    expect(runner.interpreterFor('rb')).toBeUndefined();
  });

  it('kills a script past its timeout together with the child it started', async () => {
    const runner = createScriptRunner({ ...settings, timeoutMs: 500 });
    const result = await runner.run(shell('sleep 30 & echo $! ; wait'), {});
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    expect(result.durationMs).toBeLessThan(5_000);
    const child = Number(result.stdout.trim());
    await vi.waitFor(() => expect(isDead(child)).toBe(true), { timeout: 2_000, interval: 20 });
  });

  it('cuts 10 MiB of output at maxOutputBytes and kills the process group at once', async () => {
    const runner = createScriptRunner({ ...settings, maxOutputBytes: 64 * 1024 });
    const result = await runner.run(shell(`head -c 10485760 /dev/zero | tr '\\0' a`), {});
    expect(result).toMatchObject({ truncated: true, timedOut: false, signal: 'SIGKILL' });
    expect(result.stdout.length + result.stderr.length).toBeLessThanOrEqual(64 * 1024);
    expect(result.stdout).toMatch(/^a+$/);
    expect(result.durationMs).toBeLessThan(2_000);
  });

  it('passes only allow-listed variables of the service environment', async () => {
    process.env.HANGAR__SECRET_FOR_TEST = 'x';
    try {
      const result = await createScriptRunner(settings).run(shell('env'), {});
      expect(result.stdout).not.toContain('HANGAR__SECRET_FOR_TEST');
      expect(result.stdout).toContain(`PATH=${process.env.PATH}\n`);
      // PWD is the shell's own.
      const names = result.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('=')[0]);
      expect(names.sort()).toEqual(['PATH', 'PWD']);
    } finally {
      delete process.env.HANGAR__SECRET_FOR_TEST;
    }
  });

  it('does not let a tenant at its limit hold back another tenant', async () => {
    const runner = createScriptRunner({ ...settings, maxConcurrentPerTenant: 1, maxConcurrentTotal: 4 });
    const firstOfA = runner.run(shell('sleep 30', 'tenant-a'), {}, stopLater().signal);
    const secondOfA = runner.run(shell('echo a2', 'tenant-a'), {});
    const started = performance.now();
    const ofB = await runner.run(shell('echo b', 'tenant-b'), {});
    expect(ofB.stdout).toBe('b\n');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(runner.spawnCount()).toBe(2);

    longRunning[0].abort();
    expect((await firstOfA).signal).toBe('SIGKILL');
    expect((await secondOfA).stdout).toBe('a2\n');
  });

  it('gives a freed slot to the first waiter whose tenant is under its limit, passing over one at its limit', async () => {
    const runner = createScriptRunner({ ...settings, maxConcurrentPerTenant: 1, maxConcurrentTotal: 2 });
    const ofA = stopLater();
    const ofC = stopLater();
    const runningOfA = runner.run(shell('sleep 30', 'tenant-a'), {}, ofA.signal);
    const runningOfC = runner.run(shell('sleep 30', 'tenant-c'), {}, ofC.signal);
    const waitingOfA = runner.run(shell('echo a2', 'tenant-a'), {});
    const waitingOfB = runner.run(shell('echo b', 'tenant-b'), {});

    ofC.abort();
    await runningOfC;
    expect((await waitingOfB).stdout).toBe('b\n');
    expect(runner.spawnCount()).toBe(3);
    ofA.abort();
    await runningOfA;
    expect((await waitingOfA).stdout).toBe('a2\n');
  });

  it('refuses as busy after concurrencyWaitMs at the total limit, and frees the slot when the script ends', async () => {
    const runner = createScriptRunner({ ...settings, maxConcurrentTotal: 1, concurrencyWaitMs: 200 });
    const long = stopLater();
    const running = runner.run(shell('sleep 30'), {}, long.signal);
    const started = performance.now();
    const refused = runner.run(shell('echo second', 'tenant-b'), {});
    await expect(refused).rejects.toMatchObject({ reason: 'busy', message: expect.stringContaining('200 ms') });
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(performance.now() - started).toBeLessThan(1_000);

    long.abort();
    await running;
    expect((await runner.run(shell('echo third', 'tenant-b'), {})).stdout).toBe('third\n');
  });

  it('kills the process group on abort, and rejects when aborted before the start', async () => {
    const runner = createScriptRunner(settings);
    const controller = new AbortController();
    const result = await runner.run(shell('sleep 30 & echo $! ; wait'), { onFirstOutput: () => controller.abort() }, controller.signal);
    expect(result).toMatchObject({ signal: 'SIGKILL', timedOut: false });
    const child = Number(result.stdout.trim());
    await vi.waitFor(() => expect(isDead(child)).toBe(true), { timeout: 2_000, interval: 20 });

    await expect(runner.run(shell('echo never'), {}, AbortSignal.abort())).rejects.toMatchObject({ name: 'AbortError' });
    expect(runner.spawnCount()).toBe(1);
  });

  it('runs stored content from a private temp file that is removed after the run', async () => {
    const result = await createScriptRunner(settings).run(shell('echo "$0"; stat -c %a "$0"; exit 3'), {});
    const [path, mode] = result.stdout.trim().split('\n');
    expect(basename(path)).toBe('greet.sh');
    expect(dirname(path).startsWith(tmpdir())).toBe(true);
    expect(mode).toBe('700');
    expect(existsSync(dirname(path))).toBe(false);
  });

  it('runs an on-disk script in its own directory and leaves the file in place', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'on-disk-skill-'));
    try {
      writeFileSync(join(directory, 'where.sh'), 'pwd; echo "$1"');
      const result = await createScriptRunner(settings).run(
        { ...shell(''), source: { path: join(directory, 'where.sh') } },
        { args: ['arg'] },
      );
      expect(result.stdout).toBe(`${directory}\narg\n`);
      expect(existsSync(join(directory, 'where.sh'))).toBe(true);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('frees the slot when the interpreter is missing, and ignores a script that leaves its stdin unread', async () => {
    const runner = createScriptRunner({
      ...settings,
      interpreters: { sh: '/bin/sh', py: '/nonexistent/python3 -I' },
      maxArgumentBytes: 4 * 1024 * 1024,
      maxConcurrentTotal: 1,
      concurrencyWaitMs: 200,
    });
    await expect(runner.run({ ...shell('print(1)'), extension: 'py' }, {})).rejects.toThrow(/could not be started.*ENOENT/);
    // 1 MiB fills the pipe, so writing it to a script that exits at once meets EPIPE.
    const result = await runner.run(shell('exit 0'), { stdin: 'x'.repeat(1024 * 1024) });
    expect(result.exitCode).toBe(0);
  });
});
