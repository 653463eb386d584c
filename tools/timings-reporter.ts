import { mkdirSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

declare module '@vitest/runner' {
  interface TaskMeta {
    /** Wall time the file waited for its Hangars and engines to start (tools/test-worker-setup.ts). */
    startUpMs?: number;
    startUps?: number;
  }
}

/** Where the whole table is written; the slowest files are also printed. */
const TABLE = '.hangar/test-timings.tsv';
const SHOWN = 25;

interface Row {
  file: string;
  project: string;
  wallMs: number;
  collectMs: number;
  startUpMs: number;
  startUps: number;
  testsMs: number;
  tests: number;
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);

/**
 * Where a test run's time goes, per file: its wall time (set-up, collect, tests and hooks), of which
 * collect (importing the file and what it imports) and start-up (waiting for the Hangars and engines
 * it starts); the slowest first, and the sums per project. The next person cutting CI's time reads
 * this before guessing.
 */
export default class TimingsReporter implements Reporter {
  private started = performance.now();

  onTestRunStart() {
    this.started = performance.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const rows = testModules.map((module) => rowOf(module)).sort((a, b) => b.wallMs - a.wallMs);
    if (!rows.length) return;
    const header = ['wall s', 'collect s', 'start-up s', 'starts', 'tests s', 'tests', 'project', 'file'];
    const line = (row: Row) => [
      seconds(row.wallMs),
      seconds(row.collectMs),
      seconds(row.startUpMs),
      row.startUps,
      seconds(row.testsMs),
      row.tests,
      row.project,
      row.file,
    ];
    mkdirSync('.hangar', { recursive: true });
    writeFileSync(TABLE, [header, ...rows.map(line)].map((cells) => cells.join('\t')).join('\n') + '\n');
    const out: string[] = [`\nSlowest test files (all ${rows.length} in ${TABLE}):`];
    out.push(columns([header, ...rows.slice(0, SHOWN).map(line)]));
    out.push('\nPer project (sums over files; two run at once):');
    const projects = [...new Set(rows.map((row) => row.project))];
    const sums = projects.map((project) => {
      const of = rows.filter((row) => row.project === project);
      const sum = (key: 'wallMs' | 'collectMs' | 'startUpMs' | 'testsMs') => seconds(of.reduce((total, row) => total + row[key], 0));
      return [project, of.length, sum('wallMs'), sum('collectMs'), sum('startUpMs'), sum('testsMs')];
    });
    out.push(columns([['project', 'files', 'wall s', 'collect s', 'start-up s', 'tests s'], ...sums]));
    out.push(`test run wall time: ${seconds(performance.now() - this.started)} s`);
    console.log(out.join('\n'));
  }
}

function rowOf(module: TestModule): Row {
  const diagnostic = module.diagnostic();
  const meta = module.meta();
  const tests = [...module.children.allTests()].length;
  return {
    file: relative(process.cwd(), module.moduleId),
    project: module.project.name,
    wallMs:
      diagnostic.prepareDuration +
      diagnostic.environmentSetupDuration +
      diagnostic.setupDuration +
      diagnostic.collectDuration +
      diagnostic.duration,
    collectMs: diagnostic.collectDuration,
    startUpMs: meta.startUpMs ?? 0,
    startUps: meta.startUps ?? 0,
    testsMs: diagnostic.duration,
    tests,
  };
}

/** Cells padded to their column's width, numbers to the right. */
function columns(table: Array<Array<string | number>>): string {
  const widths = table[0].map((_, index) => Math.max(...table.map((row) => String(row[index]).length)));
  return table
    .map((row) =>
      row
        .map((cell, index) =>
          typeof cell === 'number' || /^[\d.]+$/.test(String(cell))
            ? String(cell).padStart(widths[index])
            : String(cell).padEnd(widths[index]),
        )
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
