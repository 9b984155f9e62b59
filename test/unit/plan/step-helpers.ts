/** Shared helpers of the step-planning tests. */
import type { RunUnitConfig } from '../../../src/config/types.js';
import { ConfigError } from '../../../src/diagnostics/errors.js';
import { planSteps, type PlannedStep } from '../../../src/plan/steps.js';
import { formatDiagnostics } from '../../../src/report/diagnostic-printer.js';
import type { Phase } from '../../../src/vocabulary.js';

/** The cache root of the kapp the tests plan. */
export const CACHE = '/work/cache/web/nginx';
const ctx = { kappId: 'web:nginx', cacheRoot: CACHE };

/** Plan `phase` of kapp `web:nginx`. */
export function plan(units: RunUnitConfig[], phase: Phase): PlannedStep[] {
  return planSteps(units, phase, ctx);
}

/** The names of `steps`, in order. */
export function names(steps: readonly PlannedStep[]): string[] {
  return steps.map((s) => s.name);
}

/** The printed diagnostics of the ConfigError `fn` throws. */
export function diagnosticsOf(fn: () => unknown, source?: Record<string, string>): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) {
      return formatDiagnostics(e.diagnostics, { cwd: '/stack', readSource: (f) => source?.[f] });
    }
    throw e;
  }
  throw new Error('expected a ConfigError');
}
