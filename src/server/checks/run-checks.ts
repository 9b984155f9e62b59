/**
 * Run checks (policy hooks): each check of a stage judges a preview document — a command run with no shell, the
 * document on stdin, in the project's folder with the environment the project's runs see (exit 0 passes; its exit
 * code and last lines are the message), or an HTTP endpoint the document is POSTed to, signed as notifications are,
 * answering `{"status": "passed"|"failed", "message"}`. A check that times out or cannot be run fails.
 *
 * Not its job: storing the results, deciding what a failure does to the run (`blockingFailure` says whether one
 * stops it; the run's phases act on it), or reading the configuration (`gate-config.ts`).
 */
import { randomUUID } from 'node:crypto';
import { MAX_CHECK_MESSAGE_BYTES, type CheckResult, type CheckStage } from '../../api/index.js';
import { redactCredentials } from '../../diagnostics/redact.js';
import { isSecretName } from '../../plan/secrets.js';
import { runProcess } from '../../process/process-runner.js';
import type { SpawnResult } from '../../process/spawn.js';
import type { RunCheck } from '../gate-config.js';
import { readBodyStart, signedHeaders } from '../notify/deliverer.js';

/** What each check's request says it is (`X-Kapps-Event`, and `event` in its body). */
export const CHECK_EVENT = 'run.check';
/** The bytes of an endpoint's answer read at the most; a longer answer fails the check. */
export const MAX_CHECK_ANSWER_BYTES = 64 * 1024;
/** Lines of a command's output kept (stdout and stderr interleaved, the last ones), before the bytes bound. */
const TAIL_LINES = 20;
/** How a check's request presents itself. */
const USER_AGENT = 'kapps-check';
/** The longest message a check's log line shows (the whole is in the run's `checks`). */
const LOG_MESSAGE_CHARS = 300;
/** What replaces a secret in a check's message. */
const MASK = '***';

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

/** A check's outcome before it is dated and named. */
interface Outcome {
  readonly status: 'passed' | 'failed';
  readonly message: string;
}

/**
 * Run the checks of `stage` among `checks` (in their order, one after another) on `document` (the preview document
 * as JSON text); their results, in that order. Every check of the stage runs, whatever an earlier one said (the run
 * shows them all); once `ctx.signal` is aborted, the running check is stopped (failed, "cancelled") and no other
 * starts. Never throws for a check's failure: it is in its result.
 */
export async function runChecks(
  checks: readonly RunCheck[],
  stage: CheckStage,
  document: string,
  ctx: CheckContext,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const check of checks) {
    if (check.stage !== stage) continue;
    if (ctx.signal.aborted && results.length > 0) break;
    const at = new Date();
    const started = performance.now();
    let outcome: Outcome;
    try {
      outcome =
        check.url !== undefined
          ? await postCheck(check, document, ctx)
          : await commandCheck(check, checks, document, ctx);
    } catch (error) {
      // A bug or an unexpected refusal below (the process server gone, say): the check could not be run.
      outcome = {
        status: 'failed',
        message: `could not be run: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    const result: CheckResult = {
      name: check.name,
      stage: check.stage,
      enforcement: check.enforcement,
      status: outcome.status,
      message: boundedTail(redactCredentials(outcome.message), MAX_CHECK_MESSAGE_BYTES),
      durationMs: Math.max(0, Math.round(performance.now() - started)),
      at: at.toISOString(),
    };
    results.push(result);
    ctx.message(logLine(result));
  }
  return results;
}

/** Whether results stop the run: a mandatory check failed. The first such result, or undefined. */
export function blockingFailure(results: readonly CheckResult[]): CheckResult | undefined {
  return results.find((r) => r.enforcement === 'mandatory' && r.status === 'failed');
}

/** `30s`, `90s`, `2m`, `1h`: a check's timeout as a message says it. */
export function timeoutText(seconds: number): string {
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds >= 120 && seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/**
 * A command check: `command` with no shell, the document on stdin, in `ctx.cwd`, with `ctx.env` (without any check's
 * signing key, should the project pass it) and the run's identity (`KAPPS_CHECK_*`, `KAPPS_RUN_*`); its process
 * group killed on the timeout or the run's cancel.
 */
async function commandCheck(
  check: RunCheck,
  all: readonly RunCheck[],
  document: string,
  ctx: CheckContext,
): Promise<Outcome> {
  const [command, ...args] = check.command ?? [];
  if (command === undefined) return { status: 'failed', message: 'the check has neither `command` nor `url`' };
  const env: Record<string, string> = { ...ctx.env };
  for (const c of all) if (c.secretEnv !== undefined) delete env[c.secretEnv];
  Object.assign(env, {
    KAPPS_CHECK_NAME: check.name,
    KAPPS_CHECK_STAGE: check.stage,
    KAPPS_RUN_ID: ctx.run.id,
    KAPPS_RUN_TYPE: ctx.run.type,
    KAPPS_PROJECT: ctx.run.project,
    KAPPS_STACK: ctx.run.stack,
  });
  const r = await runProcess({
    command,
    args,
    cwd: ctx.cwd,
    env,
    input: document,
    timeoutMs: check.timeoutSeconds * 1000,
    signal: ctx.signal,
    captureOutput: false,
    tailLines: TAIL_LINES,
  });
  const tail = redactEnvSecrets(r.outputTail.join('\n'), ctx.env);
  const withTail = (head: string): string => (tail.trim() === '' ? head : `${head}\n${tail}`);
  if (r.spawnError !== undefined) return { status: 'failed', message: r.spawnError };
  if (r.timedOut)
    return { status: 'failed', message: withTail(`timed out after ${timeoutText(check.timeoutSeconds)}`) };
  if (r.cancelled) return { status: 'failed', message: withTail('cancelled: the run was cancelled') };
  return { status: r.exitCode === 0 ? 'passed' : 'failed', message: withTail(exitText(r)) };
}

function exitText(r: SpawnResult): string {
  return r.exitCode !== null ? `exit code ${r.exitCode}` : `killed by ${r.signal ?? 'a signal'}`;
}

/** `text` with the value of each variable of `env` whose name looks secret (`*_TOKEN`, `*PASSWORD*`…) masked. */
function redactEnvSecrets(text: string, env: Readonly<Record<string, string>>): string {
  let out = text;
  const secrets = Object.entries(env)
    .filter(([name, value]) => isSecretName(name) && value.length >= 4)
    .map(([, value]) => value)
    .sort((a, b) => b.length - a.length);
  for (const secret of secrets) out = out.split(secret).join(MASK);
  return out;
}

/**
 * A URL check: one POST of `{event, deliveryId, check, run, preview}` signed with the key in `ctx.serverEnv`
 * (as notifications are: `X-Kapps-Signature-256`), redirects not followed, within the check's timeout; a 2xx answer
 * of at most `MAX_CHECK_ANSWER_BYTES` holding `{"status": "passed"|"failed", "message"?: string}` is the outcome.
 */
async function postCheck(check: RunCheck, document: string, ctx: CheckContext): Promise<Outcome> {
  const url = check.url ?? '';
  const secretEnv = check.secretEnv;
  const secret = secretEnv !== undefined ? ctx.serverEnv[secretEnv] : undefined;
  if (secretEnv === undefined) return { status: 'failed', message: 'the check has `url` but no `secret_env`' };
  if (!secret) return { status: 'failed', message: `\`${secretEnv}\` is not set in the server's environment` };
  const scrub = (text: string): string => text.split(secret).join(MASK);
  const deliveryId = randomUUID();
  const head = JSON.stringify({
    event: CHECK_EVENT,
    deliveryId,
    check: { name: check.name, stage: check.stage, enforcement: check.enforcement },
    run: ctx.run,
  });
  // The document is the server's own JSON text: it is sent as it is, not parsed and written again.
  const body = `${head.slice(0, -1)},"preview":${document.trim()}}`;
  const timeout = AbortSignal.timeout(check.timeoutSeconds * 1000);
  const signal = AbortSignal.any([ctx.signal, timeout]);
  const failedBecause = (why: string): Outcome => ({ status: 'failed', message: scrub(why) });
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: signedHeaders(secret, CHECK_EVENT, deliveryId, body, USER_AGENT),
      body,
    });
  } catch (error) {
    return failedBecause(requestFailure(error, check, timeout, ctx.signal));
  }
  let answer: { text: string; overflow: boolean };
  try {
    answer = await readBounded(response, MAX_CHECK_ANSWER_BYTES);
  } catch (error) {
    return failedBecause(`the answer could not be read: ${requestFailure(error, check, timeout, ctx.signal)}`);
  }
  if (response.status < 200 || response.status > 299)
    return failedBecause(
      `the endpoint answered ${response.status}${answer.text.trim() ? `: ${oneLine(answer.text, 1000)}` : ''}`,
    );
  if (answer.overflow)
    return failedBecause(`the endpoint's answer is larger than ${MAX_CHECK_ANSWER_BYTES / 1024} KiB`);
  return failedOr(answer.text, failedBecause, scrub);
}

/** The outcome an endpoint's 2xx answer says, or why it says none. */
function failedOr(text: string, failedBecause: (why: string) => Outcome, scrub: (text: string) => string): Outcome {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return failedBecause(`the endpoint's answer is not JSON: ${oneLine(text, 200) || '(empty)'}`);
  }
  const answer = parsed as { status?: unknown; message?: unknown } | null;
  const status = typeof answer === 'object' && answer !== null ? answer.status : undefined;
  if (status !== 'passed' && status !== 'failed')
    return failedBecause(`the endpoint's answer has no \`status\` "passed" or "failed": ${oneLine(text, 200)}`);
  const message = answer?.message;
  if (message !== undefined && message !== null && typeof message !== 'string')
    return failedBecause("the endpoint's answer has a `message` that is not a string");
  return { status, message: scrub(message ?? '') };
}

/** Why a request got no answer, in words. */
function requestFailure(error: unknown, check: RunCheck, timeout: AbortSignal, cancel: AbortSignal): string {
  if (cancel.aborted) return 'cancelled: the run was cancelled';
  if (timeout.aborted) return `timed out after ${timeoutText(check.timeoutSeconds)}`;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code
    ? `${cause.code}${cause.message ? `: ${cause.message}` : ''}`
    : error instanceof Error
      ? error.message
      : String(error);
  return `no answer from the endpoint: ${why}`;
}

/** An answer's body: its first `max` bytes (decoded), and whether there was more (the rest is not read). */
async function readBounded(response: Response, max: number): Promise<{ text: string; overflow: boolean }> {
  const { bytes, overflow } = await readBodyStart(response, max);
  return { text: bytes.toString('utf8'), overflow };
}

/** The end of `text` within `max` UTF-8 bytes: a head line kept when it fits, the cut marked with `…`. */
function boundedTail(text: string, max: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.byteLength <= max) return text;
  const firstLine = text.split('\n', 1)[0] ?? '';
  const headBytes = Buffer.byteLength(firstLine, 'utf8');
  const keepHead = headBytes + 64 < max / 2;
  const marker = keepHead ? `${firstLine}\n…` : '…';
  const room = max - Buffer.byteLength(marker, 'utf8');
  // A cut inside a character leaves continuation bytes at the start: they decode as U+FFFD, dropped here.
  const end = bytes
    .subarray(bytes.byteLength - room)
    .toString('utf8')
    .replace(/^\uFFFD+/, '');
  return marker + end;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' | ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A check's line in the run's log: `check opa (after_preview, mandatory): failed in 1.2 s: exit code 1 | …`. */
function logLine(r: CheckResult): string {
  const seconds = `${Number((r.durationMs / 1000).toFixed(1))} s`;
  const message = oneLine(r.message, LOG_MESSAGE_CHARS);
  return `check ${r.name} (${r.stage}, ${r.enforcement}): ${r.status} in ${seconds}${message ? `: ${message}` : ''}`;
}
