/**
 * Prints one plain line at the very end of `npm test`: `N passed, N failed`, so a CI log is readable at a glance.
 * Skipped tests (only environment-dependent ones, which print why) are counted on the line before it.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed++;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    failed += unhandledErrors.length;
    if (skipped) process.stdout.write(`\n${skipped} skipped (each skip prints its reason above)`);
    process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
  }
}
