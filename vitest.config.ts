import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/support/summary-reporter.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    hookTimeout: 60_000,
    testTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', new SummaryReporter()],
  },
});
