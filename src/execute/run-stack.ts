/**
 * Running a stack: the walks each command makes over the selection's sub-graph, with a pool of `workers` kapps at
 * a time, and the event stream that reporters and the release recorder consume.
 *
 * | command  | walk(s)                                                                                          |
 * |----------|--------------------------------------------------------------------------------------------------|
 * | install  | down: processed kapps run plan_install / apply_install / both, then provide their outputs;       |
 * |          | unselected ancestors only provide their outputs                                                  |
 * | delete   | down: every kapp with outputs provides them; then up: processed kapps run plan_delete /          |
 * |          | apply_delete / both (dependents before their dependencies)                                       |
 * | output   | down: processed kapps run their output phase                                                     |
 * | clean    | down: processed kapps run their clean phase                                                      |
 * | template | down: processed kapps render their templates; every kapp provides its outputs                   |
 *
 * "Provide outputs" = run the output phase and load the declared outputs, for kapps that declare any.
 *
 * Events: each kapp the run reports on (listed in run-started) gets exactly one kapp-finished, and at most one
 * kapp-started before it; every step event of a kapp comes between the two. In a delete, a kapp with outputs starts
 * when its outputs are loaded walking down and finishes once it was deleted walking up. Every event passes
 * through the run's redactor, so sensitive output values never leave the executor.
 */
import type { KappStatus, Phase } from '../vocabulary.js';
import { walkDag, type NodeResult, type WalkNode } from './walk.js';
import type { Stack } from '../stack/stack.js';
import type { GoMap } from '../go-value/value.js';
import { visitKapp, viewFor, type OutputLoading, type VisitContext, type VisitPlan } from './kapp-visit.js';
import { redactEvent, Redactor } from './redact.js';
import { currentRenderContext, processEnvContext, withRenderContext } from '../template/index.js';
import type { RunEvent } from '../report/events.js';
import type { EmitEvent, KappResult, RunOptions, RunSummary } from './types.js';

export interface RunDeps {
  readonly emit: EmitEvent;
  /** Aborted on SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  /** Called after each kapp's visit in the main walk (e.g. to save release state). */
  readonly onKappFinished?: (result: KappResult) => Promise<void> | void;
  /** Called once no kapp will finish any more, before the run awaits the saves `onKappFinished` started. */
  readonly onKappsDone?: () => void;
}

/** The phases a command runs for processed kapps. */
export function phasesFor(options: Pick<RunOptions, 'command' | 'mode'>): Phase[] {
  const pair = (plan: Phase, apply: Phase): Phase[] =>
    options.mode === 'plan' ? [plan] : options.mode === 'apply' ? [apply] : [plan, apply];
  switch (options.command) {
    case 'install':
      return pair('plan_install', 'apply_install');
    case 'delete':
      return pair('plan_delete', 'apply_delete');
    case 'output':
      return ['output'];
    case 'clean':
      return ['clean'];
    case 'template':
      return [];
  }
}

const now = (): string => new Date().toISOString();

/** The visits of one kapp: delete's output-loading visit (walking down) and the main walk's visit. */
interface KappVisits {
  readonly load?: VisitPlan;
  readonly main?: VisitPlan;
}

/** The visit a command starts from: it sets only what differs. */
const DEFAULT_VISIT: VisitPlan = {
  role: 'selected',
  templates: true,
  phases: [],
  loadOutputs: 'no',
  ignoreErrors: false,
  kappEvents: 'both',
};

const visit = (fields: Partial<VisitPlan>): VisitPlan => ({ ...DEFAULT_VISIT, ...fields });

/** Load the outputs the kapp declares, passing over missing files; a failing output step fails the kapp. */
const TOLERATE_MISSING: OutputLoading = { missing: 'tolerate', stepErrors: 'fail' };

/** What the run does with one kapp of the sub-graph whose conditions hold. */
function kappVisits(
  kapp: { readonly processed: boolean; readonly hasOutputs: boolean },
  options: RunOptions,
  phases: readonly Phase[],
): KappVisits {
  const { processed, hasOutputs } = kapp;
  const approved = options.mode !== 'plan';
  switch (options.command) {
    case 'install':
      if (processed) {
        // A plan goes on without outputs it cannot read; an install must produce them.
        const loadOutputs: OutputLoading = approved
          ? { missing: 'error', stepErrors: 'fail' }
          : { missing: 'tolerate', stepErrors: 'ignore' };
        return { main: visit({ phases, loadOutputs }) };
      }
      if (!hasOutputs) return {};
      return {
        main: visit({
          role: 'outputs',
          loadOutputs: { missing: 'tolerate', stepErrors: approved ? 'fail' : 'ignore' },
        }),
      };
    case 'delete': {
      const load = hasOutputs
        ? visit({
            role: processed ? 'selected' : 'outputs',
            loadOutputs: TOLERATE_MISSING,
            kappEvents: processed ? 'start' : 'both',
          })
        : undefined;
      const main = processed
        ? visit({ phases, ignoreErrors: options.ignoreErrors, kappEvents: load ? 'finish' : 'both' })
        : undefined;
      return { ...(load ? { load } : {}), ...(main ? { main } : {}) };
    }
    case 'output':
      if (!processed) return {};
      // A kapp with outputs runs its output phase as they are loaded (`kapps output` prints them after the run).
      // Reading outputs (a preview's refresh) loads them only: a kapp that declares none runs nothing.
      if (options.readOutputs || hasOutputs)
        return { main: visit({ templates: false, loadOutputs: TOLERATE_MISSING }) };
      return { main: visit({ templates: false, phases }) };
    case 'clean':
      return processed ? { main: visit({ templates: false, phases }) } : {};
    case 'template':
      if (!processed && !hasOutputs) return {};
      return {
        main: visit({ role: processed ? 'selected' : 'outputs', templates: processed, loadOutputs: TOLERATE_MISSING }),
      };
  }
}

/** What the run does with each kapp of the sub-graph (kapps it does nothing with are absent). */
function planVisits(stack: Stack, options: RunOptions): Map<string, KappVisits> {
  const phases = phasesFor(options);
  const out = new Map<string, KappVisits>();
  for (const node of stack.selection.nodes) {
    if (!node.conditionsOk) continue;
    const processed = node.processed && (options.only === undefined || options.only.has(node.id));
    const hasOutputs = stack.kapp(node.id).outputIds.length > 0;
    const visits = kappVisits({ processed, hasOutputs }, options, phases);
    if (visits.load || visits.main) out.set(node.id, visits);
  }
  return out;
}

/**
 * The phases the run will run for each kapp, in stack order (for the check that every command exists before
 * anything runs). Kapps that provide outputs run their output phase.
 */
export function plannedPhases(stack: Stack, options: RunOptions): Map<string, Phase[]> {
  const out = new Map<string, Phase[]>();
  for (const [id, visits] of planVisits(stack, options)) {
    const phases = new Set<Phase>();
    const hasOutputs = stack.kapp(id).outputIds.length > 0;
    for (const visit of [visits.load, visits.main]) {
      if (!visit) continue;
      for (const p of visit.phases) phases.add(p);
      if (visit.loadOutputs !== 'no' && hasOutputs) phases.add('output');
    }
    if (phases.size > 0) out.set(id, [...phases]);
  }
  return out;
}

/** Run the command over the stack's selection. Never throws for kapp failures: they are in the summary. */
export function runStack(stack: Stack, options: RunOptions, deps: RunDeps): Promise<RunSummary> {
  const redactor = new Redactor();
  for (const secret of options.secrets ?? []) redactor.add(secret);
  // Values rendered from sensitive values are sensitive too, for as long as the run lasts: the run's redactor
  // watches every render of this run (and of no other run going on at the same time).
  const outer = currentRenderContext() ?? processEnvContext;
  return withRenderContext({ ...outer, watch: redactor }, () => runWatched(stack, options, deps, redactor));
}

function runWatched(stack: Stack, options: RunOptions, deps: RunDeps, redactor: Redactor): Promise<RunSummary> {
  return new StackRun(stack, options, deps, redactor).run();
}

/**
 * One run of a command over a stack: the walks, the results as each kapp ends, and the saves of those results
 * (started at once so dependents do not wait; awaited before the run ends, a failed one failing the run).
 */
class StackRun {
  readonly #stack: Stack;
  readonly #options: RunOptions;
  readonly #deps: RunDeps;
  readonly #redactor: Redactor;
  readonly #ctx: VisitContext;
  readonly #visits: Map<string, KappVisits>;
  /** Kapps the run reports on: those it visits, and selected kapps whose conditions are false (skipped). */
  readonly #reported: string[];
  readonly #isReported: ReadonlySet<string>;
  readonly #walkNodes: WalkNode[];
  readonly #results = new Map<string, KappResult>();
  readonly #pending: Promise<unknown>[] = [];
  /** A save failed: the release no longer records this run (unlocked by hand, store gone), so no kapp starts. */
  #saveFailed = false;

  constructor(stack: Stack, options: RunOptions, deps: RunDeps, redactor: Redactor) {
    this.#stack = stack;
    this.#options = options;
    this.#deps = deps;
    this.#redactor = redactor;
    this.#ctx = {
      stack,
      options,
      emit: (event) => this.#emit(event),
      redactor,
      ownOutputs: new Map<string, GoMap>(),
      views: new Map<string, GoMap>(),
      startedAt: new Map<string, number>(),
    };
    this.#visits = planVisits(stack, options);
    const nodes = stack.selection.nodes;
    this.#reported = nodes.filter((n) => this.#visits.has(n.id) || (n.selected && !n.conditionsOk)).map((n) => n.id);
    this.#isReported = new Set(this.#reported);
    this.#walkNodes = nodes.map((n) => ({ id: n.id, deps: n.dependsOn }));
  }

  async run(): Promise<RunSummary> {
    const started = Date.now();
    this.#announce();
    // delete: first load the outputs walking down, so kapps being deleted (dependents first) can read them.
    const stopped = await this.#loadWalk();
    if (stopped === undefined) await this.#mainWalk();
    else {
      for (const id of this.#reported) {
        const reason = this.#visits.has(id) ? stopped : 'conditions failed';
        this.#finishUnvisited(id, { status: 'skipped', reason });
      }
    }
    this.#deps.onKappsDone?.();
    const recordError = await this.#awaitSaves();
    const counts: Record<KappStatus, number> = { succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
    for (const r of this.#results.values()) counts[r.status]++;
    const status = this.#deps.signal.aborted
      ? 'cancelled'
      : counts.failed > 0 || recordError !== undefined
        ? 'failed'
        : 'succeeded';
    this.#emit({ type: 'run-finished', time: now(), status, counts, durationMs: Date.now() - started });
    return { status, results: this.#results, ...(recordError !== undefined ? { recordError } : {}) };
  }

  #emit(event: RunEvent): void {
    this.#deps.emit(redactEvent(event, this.#redactor));
  }

  #announce(): void {
    const stack = this.#stack;
    const options = this.#options;
    const dependsOn: Record<string, string[]> = {};
    for (const n of stack.selection.nodes)
      if (this.#isReported.has(n.id)) dependsOn[n.id] = n.dependsOn.filter((d) => this.#isReported.has(d));
    this.#emit({
      type: 'run-started',
      time: now(),
      command: options.command,
      stack: stack.config.name,
      phases: phasesFor(options),
      kapps: this.#reported,
      workers: options.workers,
      dryRun: options.dryRun,
      dependsOn,
    });
  }

  /** delete's walk down loading outputs; the reason the main walk is not made, if it is not. */
  async #loadWalk(): Promise<string | undefined> {
    const visits = this.#visits;
    if (this.#options.command !== 'delete' || ![...visits.values()].some((v) => v.load)) return undefined;
    const load = await walkDag({
      nodes: this.#walkNodes,
      direction: 'down',
      concurrency: this.#options.workers,
      keepGoing: false,
      signal: this.#deps.signal,
      run: (id, signal) => this.#visitOrSkip(id, visits.get(id)?.load, signal, visits.get(id)?.main === undefined),
      // Kapps that only provide outputs end here; the others end in the walk up (or in `run`, when that is not made).
      onNodeFinish: (id, result) => {
        if (visits.get(id)?.main === undefined) this.#finishUnvisited(id, result);
      },
    });
    const failed = [...load.statuses].find(([, r]) => r.status === 'failed');
    if (failed) return `not started: the outputs of ${failed[0]} could not be loaded`;
    if (this.#deps.signal.aborted) return 'not started: the run was cancelled';
    return undefined;
  }

  async #mainWalk(): Promise<void> {
    await walkDag({
      nodes: this.#walkNodes,
      direction: this.#options.command === 'delete' ? 'up' : 'down',
      concurrency: this.#options.workers,
      keepGoing: this.#options.keepGoing,
      signal: this.#deps.signal,
      run: (id, signal) => this.#visitOrSkip(id, this.#visits.get(id)?.main, signal, true),
      // Kapps not visited: conditions failed, a dependency failed, the run stopped or was cancelled. A kapp whose
      // own conditions are false would not have run anyway: that is its reason, not the dependency's failure.
      onNodeFinish: (id, result) => {
        const node = this.#stack.planNode(id);
        const own = result.status === 'skipped' && node?.selected === true && !node.conditionsOk;
        this.#finishUnvisited(id, own ? { status: 'skipped', reason: 'conditions failed' } : result);
      },
    });
  }

  async #visitOrSkip(
    id: string,
    plan: VisitPlan | undefined,
    signal: AbortSignal,
    record: boolean,
  ): Promise<NodeResult> {
    const ctx = this.#ctx;
    const node = this.#stack.planNode(id);
    const kapp = this.#stack.kapp(id);
    if (!plan) {
      if (!ctx.views.has(id)) ctx.views.set(id, viewFor(ctx, kapp));
      return node?.selected && !node.conditionsOk
        ? { status: 'skipped', reason: 'conditions failed' }
        : { status: 'skipped' };
    }
    if (this.#saveFailed) return { status: 'skipped', reason: 'not started: the run could not record its release' };
    const result = await visitKapp(ctx, kapp, plan, signal);
    // The visit emitted its own events.
    if (record || result.status !== 'succeeded') {
      this.#results.set(result.id, result);
      this.#save(result);
    }
    return result.reason ? { status: result.status, reason: result.reason } : { status: result.status };
  }

  #roleOf(id: string): KappResult['role'] {
    const visits = this.#visits.get(id);
    return visits?.main?.role ?? visits?.load?.role ?? 'selected';
  }

  /** Report a kapp that ends without (further) visits: skipped, or cancelled if it had started. */
  #finishUnvisited(id: string, result: NodeResult): void {
    if (this.#results.has(id) || !this.#isReported.has(id)) return;
    const r: KappResult = {
      id,
      status: result.status,
      ...(result.reason ? { reason: this.#redactor.text(result.reason) } : {}),
      role: this.#roleOf(id),
      steps: [],
    };
    this.#results.set(id, r);
    const began = this.#ctx.startedAt.get(id);
    this.#emit({
      type: 'kapp-finished',
      time: now(),
      kapp: id,
      status: r.status,
      ...(r.reason ? { reason: r.reason } : {}),
      durationMs: began === undefined ? 0 : Date.now() - began,
    });
    this.#save(r);
  }

  /**
   * Start saving a result. The promise is marked handled at once: a save that fails before the run's end awaits
   * it (the release closed by a second Ctrl-C, a full disk) must not crash the process as an unhandled rejection.
   */
  #save(result: KappResult): void {
    const saving = (async () => this.#deps.onKappFinished?.(result))();
    saving.catch(() => {
      this.#saveFailed = true;
    });
    this.#pending.push(saving);
  }

  /** Await every save; each failure is said as an error event. Returns the first failure's cause, redacted. */
  async #awaitSaves(): Promise<string | undefined> {
    const saves = await Promise.allSettled(this.#pending);
    let first: string | undefined;
    for (const e of saves) {
      if (e.status !== 'rejected') continue;
      const message = this.#redactor.text(e.reason instanceof Error ? e.reason.message : String(e.reason));
      first ??= message;
      this.#emit({ type: 'log', time: now(), level: 'error', message: `cannot record the run: ${message}` });
    }
    return first;
  }
}
