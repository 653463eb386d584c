import { spawn } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { FIXTURE_NAMES, TEST_BUILD_DIR } from '@hangar/testing';

/**
 * Vitest global setup of the split project: the services as `npm run build` emits them, so that
 * each of the many processes it starts loads plain JavaScript (under a second, where tsx takes several),
 * and the test fixture modules its configurations name, compiled beside them.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the run's build is kept: the root set-up begins it, this one awaits it, both in vitest's one process. */
const BUILT = Symbol.for('hangar.testBuild');

export default async function setup(project: TestProject) {
  await startTestBuild();
  // spawnAllInOne runs it too, in every project's workers (they inherit this), but not in watch
  // mode: a rerun after an edit would still spawn this build.
  if (!project.vitest.config.watch) process.env.HANGAR_TEST_BUILT = '1';
}

/** The run's build, begun at most once (tools/test-engines.ts begins it early, beside its own work). */
export function startTestBuild(): Promise<void> {
  const holder = globalThis as { [BUILT]?: Promise<void> };
  return (holder[BUILT] ??= buildServices());
}

async function buildServices() {
  // A child not waited for synchronously: the run's other preparations go on meanwhile.
  const npmBuild = spawn('npm', ['run', '--silent', 'build', '--', '--outdir', relative(ROOT, TEST_BUILD_DIR)], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const code = await new Promise((resolve) => npmBuild.once('exit', resolve));
  if (code !== 0) throw new Error(`npm run build exited with ${code}`);
  await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(FIXTURE_NAMES.map((name) => [name, `libs/testing/src/fixtures/${name}.ts`])),
    outdir: `${TEST_BUILD_DIR}/fixtures`,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // As the services' bundles: npm packages load from node_modules, the workspace libraries are inlined.
    plugins: [
      {
        name: 'npm-packages-external',
        setup: (builder) =>
          builder.onResolve({ filter: /^[^./]/ }, ({ path }) => (path.startsWith('@hangar/') ? undefined : { path, external: true })),
      },
    ],
    logLevel: 'warning',
  });
}
