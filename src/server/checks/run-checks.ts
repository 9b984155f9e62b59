/**
 * Run checks (policy hooks): each check of a stage judges a preview document — a command run with no shell, the
 * document on stdin, in the project's folder with the environment the project's runs see (exit 0 passes; its exit
 * code and last lines are the message), or an HTTP endpoint the document is POSTed to, signed as notifications are,
 * answering `{"status": "passed"|"failed", "message"}`. A check that times out or cannot be run fails.
 */
import type { CheckResult, CheckStage } from '../../api/index.js';
import type { RunCheck } from '../gate-config.js';

/** What the checks of one run are run with. */
export interface CheckContext {
  /** The run they judge (sent with an endpoint's request). */
  readonly run: { readonly id: string; readonly project: string; readonly stack: string; readonly type: string };
  /** The folder a command runs in (the project's folder, or the working tree of the run's commit). */
  readonly cwd: string;
  /** The environment a command sees: the project's runs' own (never the server's credentials). */
  readonly env: Readonly<Record<string, string>>;
  /** The server's environment, where a `url` check's `secret_env` is read. */
  readonly serverEnv: NodeJS.ProcessEnv;
  /** Aborted when the run is cancelled: running checks are stopped. */
  readonly signal: AbortSignal;
  /** A line for the run's log (a check's name and outcome as it finishes). */
  readonly message: (text: string) => void;
}

/**
 * Run the checks of `stage` among `checks` (in their order, one after another) on `document` (the preview document
 * as JSON text); their results, in that order. Never throws for a check's failure: it is in its result.
 */
export async function runChecks(
  checks: readonly RunCheck[],
  stage: CheckStage,
  document: string,
  ctx: CheckContext,
): Promise<CheckResult[]> {
  const due = checks.filter((c) => c.stage === stage);
  if (due.length === 0) return [];
  void document;
  void ctx;
  return Promise.reject(new Error('run checks are not built yet'));
}

/** Whether results stop the run: a mandatory check failed. The first such result, or undefined. */
export function blockingFailure(results: readonly CheckResult[]): CheckResult | undefined {
  return results.find((r) => r.enforcement === 'mandatory' && r.status === 'failed');
}
