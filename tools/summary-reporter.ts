import type { Reporter, TestModule, TestRunEndReason } from 'vitest/node';

/** Ends every run with the line CI reads: `N passed, N failed` (and skipped when any). */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>, reason: TestRunEndReason) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      let tests = 0;
      for (const test of module.children.allTests()) {
        tests += 1;
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      // A file that failed to load has no tests but must still count as a failure.
      if (tests === 0 && module.state() === 'failed') failed += 1;
    }
    failed += unhandledErrors.length;
    // A global setup that throws (the split projects' build, the engines) ends the run with no
    // module and no error handed here: the run failed all the same, and the line must say so.
    if (reason === 'failed' && failed === 0) failed = 1;
    console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  }
}
