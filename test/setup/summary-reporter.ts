import type { Reporter, TestModule } from "vitest/node";

/** Ends the run with the plain line "N passed, N failed, N skipped" that CI tooling reads. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    const count = { passed: 0, failed: 0, skipped: 0 };
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const s = t.result().state;
        if (s === "passed") count.passed++;
        else if (s === "failed") count.failed++;
        else if (s === "skipped") count.skipped++;
      }
      // A file that failed to load has no tests but is a failure.
      if (m.state() === "failed" && !m.children.size) count.failed++;
    }
    count.failed += unhandledErrors.length;
    console.log(`\ntests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped`);
  }
}
