import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';
import { parseDocument } from 'yaml';

/**
 * `npm run build [-- --outdir <dir>]`: production JavaScript, by default in dist/.
 *
 * - `<service>/main.js` for every `services/<service>/src/main.ts`, found rather than listed: one
 *   ESM bundle each, holding our code, the @hangar/* workspace libraries (TypeScript sources) and
 *   the npm packages but {@link RUN_TIME_PACKAGES}, which are resolved from node_modules at run time.
 * - beside each bundle, the files its modules open beside themselves (the worker threads);
 * - `web/`, the web console (tools/build-console.mjs), which the gateway serves at {prefix}/console;
 * - `proto/` (gRPC reflection describes the services from it) and `config/all-in-one.yaml`, the
 *   trial configuration with its code-agent modules compiled to JavaScript (`examples/*.js`).
 *
 * Run `node <outdir>/<service>/main.js` from the repository root (the image's /app): paths in the
 * configuration, the trial one included, are relative to the working directory.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TRIAL_CONFIG = 'config/all-in-one.yaml';
/** `new URL('./<file>', import.meta.url)`: a file a module opens from its own directory. */
const SIBLING_FILE = /new URL\(\s*['"]\.\/([^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g;

/**
 * npm packages that stay imports, loaded from node_modules at run time; every other one is inlined
 * into the bundle, as the @hangar/* libraries are. A process then resolves and reads a few dozen
 * files where it read some two thousand: a service starts in about two thirds of the time (the split
 * shape's nine processes, docs/decisions.md). These cannot be inlined:
 */
const RUN_TIME_PACKAGES = [
  // patched when required by the OpenTelemetry instrumentations (libs/platform/src/instrumentation.ts)
  'pg',
  'redis',
  '@redis/',
  '@opentelemetry/instrumentation',
  // open files of their own, found from their own directory (__dirname, a worker's path, WebAssembly)
  'pino',
  'thread-stream',
  '@grpc/grpc-js',
  '@grpc/proto-loader',
  '@grpc/reflection',
  '@electric-sql/pglite',
];
/** A name covers its sub-paths and its family: `pg` is also `pg-pool`, `pino` also `pino-pretty`; `@redis/` is a scope. */
const isRunTimePackage = (specifier: string) =>
  RUN_TIME_PACKAGES.some((name) =>
    name.endsWith('/')
      ? specifier.startsWith(name)
      : specifier === name || specifier.startsWith(`${name}-`) || specifier.startsWith(`${name}/`),
  );

const runTimePackagesExternal: Plugin = {
  name: 'run-time-packages-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, ({ path }) => (isRunTimePackage(path) ? { path, external: true } : undefined));
  },
};

/** Native add-ons a package tries to require and does without (ws), never installed here. */
const OPTIONAL_ADD_ONS = ['bufferutil', 'utf-8-validate'];

/** An inlined CommonJS package may `require()` a Node built-in, which an ES module has no binding for. */
const REQUIRE_IN_ESM =
  "import { createRequire as createRequireOfBundle } from 'node:module';\nconst require = createRequireOfBundle(import.meta.url);";

/**
 * The client-library instrumentation is an entry of its own that every bundle imports first: an
 * external import is evaluated before any bundled code, so inlined it would register after pg and
 * node-redis had loaded, and patch nothing.
 */
const instrumentationFirst: Plugin = {
  name: 'instrumentation-first',
  setup(build) {
    build.onResolve({ filter: /^@hangar\/platform\/instrumentation$/ }, () => ({ path: '../instrumentation.js', external: true }));
  },
};

const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' } } });
const outDir = resolve(ROOT, values.outdir!);
const started = performance.now();

rmSync(outDir, { recursive: true, force: true });
const trialConfig = parseDocument(readFileSync(join(ROOT, TRIAL_CONFIG), 'utf8'));
const trialModules = (trialConfig.getIn(['CodeAgents', 'Modules']) as { toJSON(): string[] } | undefined)?.toJSON() ?? [];
const withoutExtension = (path: string) => path.replace(/\.[cm]?[jt]s$/, '');

const { metafile } = await build({
  absWorkingDir: ROOT,
  entryPoints: {
    ...serviceEntries(),
    instrumentation: 'libs/platform/src/instrumentation.ts',
    ...Object.fromEntries(trialModules.map((module) => [withoutExtension(module), module])),
  },
  outdir: outDir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // Stack traces map to the TypeScript lines without the sources inside each map (half the size).
  sourcesContent: false,
  // No comments or indentation: the inlined packages' comments held non-ASCII characters, which made
  // V8 keep each 6–9 MB bundle as a two-byte string, decoded and scanned at every process start.
  minifyWhitespace: true,
  // Their licences beside each bundle (main.js.LEGAL.txt), out of the source for the same reason.
  legalComments: 'external',
  define: { HANGAR_BUILT: 'true' },
  plugins: [instrumentationFirst, runTimePackagesExternal],
  banner: { js: REQUIRE_IN_ESM },
  metafile: true,
  logLevel: 'warning',
});

checkRunTimeDependencies(metafile);
copySiblingFiles(metafile);
cpSync(join(ROOT, 'proto'), join(outDir, 'proto'), { recursive: true });
// The web console, built again from its sources, beside the bundles (the gateway's looks for ../web/).
execFileSync(process.execPath, [join(ROOT, 'tools/build-console.mjs')], { cwd: ROOT, stdio: 'inherit' });
cpSync(join(ROOT, 'libs/console/web'), join(outDir, 'web'), { recursive: true });
trialConfig.setIn(
  ['CodeAgents', 'Modules'],
  trialModules.map((module) => relative(ROOT, join(outDir, `${withoutExtension(module)}.js`))),
);
mkdirSync(join(outDir, 'config'), { recursive: true });
writeFileSync(join(outDir, TRIAL_CONFIG), `# Written by npm run build from ${TRIAL_CONFIG}.\n${trialConfig.toString()}`);

const entries = Object.values(metafile.outputs).filter((output) => output.entryPoint).length;
console.log(`built ${entries} entries into ${relative(ROOT, outDir) || '.'} in ${Math.round(performance.now() - started)} ms`);

function serviceEntries(): Record<string, string> {
  return Object.fromEntries(
    readdirSync(join(ROOT, 'services'))
      .filter((service) => existsSync(join(ROOT, 'services', service, 'src/main.ts')))
      .map((service) => [`${service}/main`, `services/${service}/src/main.ts`]),
  );
}

/** The image installs `--omit=dev`: a package the bundles import must be a dependency of the root or of a workspace. */
function checkRunTimeDependencies(built: Metafile) {
  const manifest = (dir: string) => join(ROOT, dir, 'package.json');
  const workspaces: string[] = JSON.parse(readFileSync(manifest('.'), 'utf8')).workspaces;
  const packageDirs = [
    '.',
    ...workspaces.flatMap((pattern) => readdirSync(join(ROOT, dirname(pattern))).map((name) => join(dirname(pattern), name))),
  ];
  const declared = new Set(
    packageDirs
      .filter((dir) => existsSync(manifest(dir)))
      .flatMap((dir) => Object.keys(JSON.parse(readFileSync(manifest(dir), 'utf8')).dependencies ?? {})),
  );
  const packageOf = (specifier: string) => specifier.match(/^(@[^/]+\/)?[^/]+/)![0];
  const undeclared = new Set(
    Object.values(built.outputs)
      .flatMap((output) => output.imports)
      .filter((imported) => imported.external && !isBuiltin(imported.path) && !imported.path.startsWith('.'))
      .map((imported) => packageOf(imported.path))
      .filter((name) => !declared.has(name) && !OPTIONAL_ADD_ONS.includes(name)),
  );
  if (undeclared.size) throw new Error(`imported at run time but not in any package.json "dependencies": ${[...undeclared].join(', ')}`);
}

function copySiblingFiles(built: Metafile) {
  for (const [output, { entryPoint, inputs }] of Object.entries(built.outputs)) {
    if (!entryPoint) continue;
    for (const input of Object.keys(inputs)) {
      for (const [, file] of readFileSync(join(ROOT, input), 'utf8').matchAll(SIBLING_FILE)) {
        cpSync(join(ROOT, dirname(input), file), join(ROOT, dirname(output), file));
      }
    }
  }
}
