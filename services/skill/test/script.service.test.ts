import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Caller } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { createScriptRunner } from '../src/scripts/script-runner.js';
import { createScriptService } from '../src/scripts/script.service.js';
import type { Skill } from '../src/skills/skill.model.js';

/** Scripts run only under a grant in force at the moment of the call; the runner's spawn count proves nothing else started. */

const caller: Caller = { tenantId: 't1', actor: 'test' };

const stored = (scripts: Skill['scripts']): Skill => ({
  name: 'pdf',
  description: 'PDF forms',
  compatibility: null,
  instructions: 'Fill forms.',
  resources: [{ name: 'forms.md', content: '# forms' }],
  scripts,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  onDisk: false,
  directory: null,
});

function onDisk(): Skill {
  const directory = join(mkdtempSync(join(tmpdir(), 'hangar-disk-skill-')), 'disk');
  mkdirSync(join(directory, 'scripts'), { recursive: true });
  writeFileSync(join(directory, 'scripts', 'where.sh'), 'echo "from $(basename "$PWD")"');
  return {
    ...stored([{ name: 'where', extension: 'sh', content: 'ignored: the file on disk runs' }]),
    name: 'disk',
    onDisk: true,
    directory,
  };
}

function setup(options: {
  skills: Skill[];
  granted: (skill: string, script: string) => boolean;
  allowStoredScripts?: boolean;
  runner?: boolean;
}) {
  const runner = createScriptRunner({
    interpreters: { sh: '/bin/sh' },
    environmentAllowList: ['PATH'],
    timeoutMs: 5_000,
    maxOutputBytes: 4096,
    maxArgumentBytes: 1024,
    maxConcurrentPerTenant: 2,
    maxConcurrentTotal: 4,
    concurrencyWaitMs: 1_000,
  });
  const service = createScriptService({
    skills: { find: async (_caller, name) => options.skills.find((skill) => skill.name === name) },
    grants: { covers: async (_caller, skill, script) => options.granted(skill, script) },
    runner: options.runner === false ? undefined : runner,
    allowStoredScripts: options.allowStoredScripts ?? true,
  });
  return { service, runner };
}

const ECHO = stored([{ name: 'echo', extension: 'sh', content: 'echo "args: $*"; cat' }]);

describe('skill scripts under grants', () => {
  it('runs a covered script with its arguments and stdin', async () => {
    const { service, runner } = setup({ skills: [ECHO], granted: () => true });
    const result = await service.runScript(caller, 'pdf', 'echo', { args: ['a', 'b'], stdin: 'from stdin' });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'args: a b\nfrom stdin', timedOut: false });
    expect(runner.spawnCount()).toBe(1);
  });

  it('spawns nothing without a grant in force, and stops at the next call once a grant is revoked', async () => {
    let granted = false;
    const { service, runner } = setup({ skills: [ECHO], granted: () => granted });
    await expect(service.runScript(caller, 'pdf', 'echo', {})).rejects.toMatchObject({ kind: 'forbidden' });
    expect(runner.spawnCount()).toBe(0);
    granted = true;
    await service.runScript(caller, 'pdf', 'echo', {});
    granted = false; // revoked or expired
    await expect(service.runScript(caller, 'pdf', 'echo', {})).rejects.toMatchObject({ kind: 'forbidden' });
    expect(runner.spawnCount()).toBe(1);
  });

  it('spawns nothing when no runner is registered or stored scripts are not allowed; a skill on disk still runs its file from its folder', async () => {
    const none = setup({ skills: [ECHO], granted: () => true, runner: false });
    await expect(none.service.runScript(caller, 'pdf', 'echo', {})).rejects.toMatchObject({ kind: 'conflict' });
    const disk = onDisk();
    const onlyDisk = setup({ skills: [ECHO, disk], granted: () => true, allowStoredScripts: false });
    await expect(onlyDisk.service.runScript(caller, 'pdf', 'echo', {})).rejects.toMatchObject({ kind: 'conflict' });
    expect(onlyDisk.runner.spawnCount()).toBe(0);
    expect((await onlyDisk.service.runScript(caller, 'disk', 'where', {})).stdout).toBe('from scripts\n');
  });

  it('refuses arguments over the limit (400) and an unknown script (404) before spawning', async () => {
    const { service, runner } = setup({ skills: [ECHO], granted: () => true });
    await expect(service.runScript(caller, 'pdf', 'echo', { args: ['x'.repeat(2000)] })).rejects.toMatchObject({ kind: 'validation' });
    await expect(service.runScript(caller, 'pdf', 'missing', {})).rejects.toMatchObject({ kind: 'notFound' });
    await expect(service.runScript(caller, 'nope', 'echo', {})).rejects.toMatchObject({ kind: 'notFound' });
    await expect(service.runScript(caller, 'pdf', 'echo', { args: ['a\u0000b'] })).rejects.toMatchObject({ kind: 'validation' });
    expect(runner.spawnCount()).toBe(0);
  });

  it('offers a run only the scripts that may run now, with its instructions and resource names', async () => {
    const two = stored([
      { name: 'fill', extension: 'sh', content: 'echo fill' },
      { name: 'sign', extension: 'sh', content: 'echo sign' },
    ]);
    const { service } = setup({ skills: [two], granted: (_skill, script) => script === 'fill' });
    expect(await service.skillsForRun(caller, ['pdf', 'deleted-since'])).toEqual([
      { name: 'pdf', description: 'PDF forms', instructions: 'Fill forms.', resourceNames: ['forms.md'], runnableScripts: ['fill'] },
    ]);
    const ruby = setup({ skills: [stored([{ name: 'gem', extension: 'rb', content: 'puts 1' }])], granted: () => true });
    expect((await ruby.service.skillsForRun(caller, ['pdf']))[0].runnableScripts).toEqual([]);
    const off = setup({ skills: [two], granted: () => true, runner: false });
    expect((await off.service.skillsForRun(caller, ['pdf']))[0].runnableScripts).toEqual([]);
    expect(await service.readResource(caller, 'pdf', 'forms.md')).toBe('# forms');
    await expect(service.readResource(caller, 'pdf', 'other.md')).rejects.toMatchObject({ kind: 'notFound' });
  });
});
