import { execFileSync } from 'node:child_process';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { FIXTURE_NAMES, TEST_BUILD_DIR } from '@hangar/testing';

/**
 * Vitest global setup of the split-shape projects: the services as `npm run build` emits them, so that
 * each of the many processes it starts loads plain JavaScript (under a second, where tsx takes several),
 * and the test fixture modules its configurations name, compiled beside them.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where the run's build is kept: both split projects name this setup, and vitest runs each project's in its one process. */
const BUILT = Symbol.for('hangar.testBuild');

export default async function setup() {
  const holder = globalThis as { [BUILT]?: Promise<void> };
  await (holder[BUILT] ??= buildServices());
}

async function buildServices() {
  execFileSync('npm', ['run', '--silent', 'build', '--', '--outdir', relative(ROOT, TEST_BUILD_DIR)], { cwd: ROOT, stdio: 'inherit' });
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
