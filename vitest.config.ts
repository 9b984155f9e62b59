import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/support/summary-reporter.js';

/**
 * Unit tests that need a real PostgreSQL server or the built CLI (the store contract suites on both backends,
 * the process server as built, processes killed mid-write): they run in the `e2e` project, beside the
 * end-to-end tests, with its global setup.
 */
const needsBuildOrPostgres = [
  'test/unit/log/log-pg.test.ts',
  'test/unit/process/server-protocol.test.ts',
  'test/unit/release/pg-store.test.ts',
  'test/unit/release/journal.test.ts',
  'test/unit/release/processes.test.ts',
  'test/unit/release/recorder.test.ts',
  'test/unit/release/release-log.test.ts',
  'test/unit/release/store.test.ts',
  'test/unit/pg/migrate.test.ts',
  'test/unit/server/file-run-store-kill.test.ts',
  'test/unit/server/pg-run-store.test.ts',
  'test/unit/server/outbox.test.ts',
  'test/unit/server/drift-store.test.ts',
];

export default defineConfig({
  test: {
    hookTimeout: 60_000,
    testTimeout: 60_000,
    pool: 'forks',
    // Most files wait on child processes, servers and browsers rather than compute: three at once keep two cores
    // busy (the default, one fewer than the cores, runs one file at a time on a 2-core machine).
    maxWorkers: 3,
    reporters: ['default', new SummaryReporter()],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // Pure modules, imported from src/: neither the build nor PostgreSQL (`npm run test:unit`). The files of a
          // worker share its process and the modules it has imported (half the time of a process per file); they
          // pass in any order (`--sequence.shuffle.files`).
          isolate: false,
          include: ['test/unit/**/*.test.ts'],
          exclude: needsBuildOrPostgres,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          // The files of a worker share its process, as the unit files do: what they start (CLIs, servers,
          // PostgreSQL databases, browsers) is their own, and each file cleans up what the support modules keep for
          // it (live servers, temporary projects) when it ends.
          isolate: false,
          // The built CLI, real servers, PostgreSQL, git and Chromium (`npm test` builds first).
          include: ['test/e2e/**/*.test.ts', ...needsBuildOrPostgres],
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
    ],
  },
});
