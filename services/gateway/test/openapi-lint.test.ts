import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { gatewayRoutes } from '../src/gateway.app.js';
import { buildOpenApiDocument } from '../src/http/openapi.js';

const REDOCLY_CLI = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin/cli.js');
const REDOCLY_CONFIG = fileURLToPath(new URL('../../../redocly.yaml', import.meta.url));

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}

/** `redocly lint --format=json` on `file`; it exits 1 when it found errors, so the report is read either way. */
function lint(file: string): Promise<LintReport> {
  const args = [REDOCLY_CLI, 'lint', file, `--config=${REDOCLY_CONFIG}`, '--format=json'];
  // No usage telemetry or update check from a test run.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      try {
        resolve(JSON.parse(stdout) as LintReport);
      } catch {
        reject(new Error(`redocly lint gave no report (${error?.message ?? 'no error'}): ${stderr}`));
      }
    });
  });
}

it('the OpenAPI document passes Redocly lint (redocly.yaml: recommended and stricter) with no error or warning', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'hangar-openapi-lint-'));
  try {
    const file = join(directory, 'openapi.json');
    await writeFile(file, JSON.stringify(buildOpenApiDocument(gatewayRoutes(), { prefix: '/hangar', version: '1.0.0' }), null, 2));
    const report = await lint(file);
    const problems = report.problems.map(
      (problem) => `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`,
    );
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
});
