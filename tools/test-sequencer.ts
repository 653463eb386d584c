import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The per-file table of a clean-clone CI run (`.hangar/test-timings.tsv` as the timings reporter
 * writes it), kept in the repository: a clean clone has no results cache, and vitest then runs the
 * largest files first, which left a slow file of modest size (a schedule that waits out two cron
 * minutes) for the end, one fork running while the other had nothing left.
 */
const DURATIONS = '.ci/test-timings.tsv';

/**
 * Files in order of their wall time in the recorded run, longest first, so that the two forks end
 * together (longest processing time first); a file the table does not know yet runs first, where
 * its time cannot leave the other fork idle at the end. Locally, a file that failed in the last run
 * still goes before the others, as vitest's own order has it; without the table, that order.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = recordedDurations(join(this.ctx.config.root, DURATIONS));
    if (!durations.size) return super.sort(files);
    const key = (spec: TestSpecification) => `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
    const failed = (spec: TestSpecification) => (this.ctx.cache.getFileTestResults(key(spec))?.failed ? 1 : 0);
    const durationOf = (spec: TestSpecification) => durations.get(key(spec)) ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => failed(b) - failed(a) || durationOf(b) - durationOf(a));
  }
}

/** `<project>:<file>` → wall seconds. */
function recordedDurations(path: string): Map<string, number> {
  if (!existsSync(path)) return new Map();
  const [header, ...rows] = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split('\t'));
  const wall = header.indexOf('wall s');
  const project = header.indexOf('project');
  const file = header.indexOf('file');
  return new Map(rows.map((cells) => [`${cells[project]}:${cells[file]}`, Number(cells[wall])]));
}
