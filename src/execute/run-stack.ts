/**
 * Running a stack: the walks each command makes over the selection's sub-graph, with a pool of `workers` kapps at
 * a time, and the event stream that reporters and the release recorder consume.
 *
 * | command  | walk(s)                                                                                          |
 * |----------|--------------------------------------------------------------------------------------------------|
 * | install  | down: processed kapps run plan_install / apply_install / both, then provide their outputs;       |
 * |          | unselected ancestors only provide their outputs                                                  |
 * | delete   | down: every kapp provides its outputs; then up: processed kapps run plan_delete / apply_delete   |
 * | output   | down: processed kapps run their output phase                                                     |
 * | clean    | down: processed kapps run their clean phase                                                      |
 * | template | down: processed kapps render their templates; every kapp provides its outputs                   |
 */
import type { KappStatus, Phase } from '../report/events.js';
import { walkDag, type NodeResult } from '../run/walk.js';
import type { Stack } from '../stack/stack.js';
import type { GoMap } from '../template/value.js';
import { visitKapp, viewFor, type VisitContext, type VisitPlan } from './kapp-visit.js';
import { Redactor } from './redact.js';
import type { EmitEvent, KappResult, RunOptions, RunSummary } from './types.js';

export interface RunDeps {
  readonly emit: EmitEvent;
  /** Aborted on SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  /** Called after each kapp's visit in the main walk (e.g. to save release state). */
  readonly onKappFinished?: (result: KappResult) => Promise<void> | void;
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

function visitPlan(options: RunOptions, processed: boolean): VisitPlan | undefined {
  const phases = phasesFor(options);
  const approved = options.mode !== 'plan';
  switch (options.command) {
    case 'install':
      return processed
        ? { role: 'selected', templates: true, phases, loadOutputs: approved ? 'must-exist' : 'tolerate-missing', ignoreErrors: false, kappEvents: true }
        : { role: 'outputs', templates: true, phases: [], loadOutputs: 'tolerate-missing', ignoreErrors: false, kappEvents: true };
    case 'delete':
      return processed
        ? { role: 'selected', templates: true, phases, loadOutputs: 'no', ignoreErrors: options.ignoreErrors, kappEvents: true }
        : undefined;
    case 'output':
    case 'clean':
      return processed
        ? { role: 'selected', templates: false, phases, loadOutputs: 'no', ignoreErrors: false, kappEvents: true }
        : undefined;
    case 'template':
      return {
        role: processed ? 'selected' : 'outputs',
        templates: processed,
        phases: [],
        loadOutputs: 'tolerate-missing',
        ignoreErrors: false,
        kappEvents: true,
      };
  }
}

/** Run the command over the stack's selection. Never throws for kapp failures: they are in the summary. */
export async function runStack(stack: Stack, options: RunOptions, deps: RunDeps): Promise<RunSummary> {
  const started = Date.now();
  const nodes = stack.selection.nodes;
  const ctx: VisitContext = {
    stack,
    options,
    emit: deps.emit,
    redactor: new Redactor(),
    ownOutputs: new Map<string, GoMap>(),
    views: new Map<string, GoMap>(),
  };
  const results = new Map<string, KappResult>();
  const dependsOn: Record<string, string[]> = {};
  for (const n of nodes) dependsOn[n.id] = [...n.dependsOn];
  deps.emit({
    type: 'run-started',
    time: now(),
    command: options.command,
    stack: stack.config.name,
    phases: phasesFor(options),
    kapps: nodes.map((n) => n.id),
    workers: options.workers,
    dryRun: options.dryRun,
    dependsOn,
  });

  const walkNodes = nodes.map((n) => ({ id: n.id, deps: n.dependsOn }));

  // delete: first load every kapp's outputs walking down, so kapps being deleted can read them.
  let loadFailed = false;
  if (options.command === 'delete' && !options.dryRun && nodes.some((n) => stack.kapp(n.id).outputIds.length > 0)) {
    deps.emit({ type: 'log', time: now(), level: 'info', message: 'Loading kapp outputs...' });
    const load = await walkDag({
      nodes: walkNodes,
      direction: 'down',
      concurrency: options.workers,
      keepGoing: false,
      signal: deps.signal,
      run: async (id, signal) => {
        const node = stack.planNode(id);
        const kapp = stack.kapp(id);
        if (!node?.conditionsOk || kapp.outputIds.length === 0) {
          ctx.views.set(id, viewFor(ctx, kapp));
          return 'skipped';
        }
        const r = await visitKapp(
          ctx,
          kapp,
          { role: 'outputs', templates: true, phases: [], loadOutputs: 'tolerate-missing', ignoreErrors: false, kappEvents: false },
          signal,
        );
        return r.reason ? { status: r.status, reason: r.reason } : r.status;
      },
    });
    for (const [id, r] of load.statuses) {
      if (r.status === 'failed') {
        loadFailed = true;
        deps.emit({ type: 'log', time: now(), level: 'error', message: `cannot load the outputs of ${id}: ${r.reason ?? 'failed'}`, kapp: id });
      }
    }
  }

  const isProcessed = (id: string): boolean =>
    (stack.planNode(id)?.processed ?? false) && (options.only === undefined || options.only.has(id));

  /** Whether the main walk would do something for this kapp (and so reports it). */
  const acts = (id: string): boolean => {
    const node = stack.planNode(id);
    if (!node) return false;
    if (!node.conditionsOk) return node.selected;
    const plan = visitPlan(options, isProcessed(id));
    return plan !== undefined && !(plan.role === 'outputs' && stack.kapp(id).outputIds.length === 0);
  };

  const pending: Promise<unknown>[] = [];
  if (!loadFailed) {
    await walkDag({
      nodes: walkNodes,
      direction: options.command === 'delete' ? 'up' : 'down',
      concurrency: options.workers,
      keepGoing: options.keepGoing,
      signal: deps.signal,
      run: async (id, signal) => {
        const node = stack.planNode(id);
        const kapp = stack.kapp(id);
        const plan = node?.conditionsOk ? visitPlan(options, isProcessed(id)) : undefined;
        if (!node || !plan || !acts(id)) {
          if (!ctx.views.has(id)) ctx.views.set(id, viewFor(ctx, kapp));
          return acts(id) ? { status: 'skipped', reason: 'conditions failed' } : 'skipped';
        }
        const result = await visitKapp(ctx, kapp, plan, signal);
        results.set(id, result);
        await deps.onKappFinished?.(result);
        return result.reason ? { status: result.status, reason: result.reason } : result.status;
      },
      onNodeFinish: (id, result) => {
        // Kapps not visited (conditions failed, a dependency failed, the run stopped or was cancelled).
        if (results.has(id) || !acts(id)) return;
        const node = stack.planNode(id);
        const r: KappResult = {
          id,
          status: result.status,
          ...(result.reason ? { reason: result.reason } : {}),
          role: isProcessed(id) ? 'selected' : 'outputs',
          steps: [],
        };
        results.set(id, r);
        deps.emit({
          type: 'kapp-finished',
          time: now(),
          kapp: id,
          status: r.status,
          ...(r.reason ? { reason: r.reason } : {}),
          durationMs: 0,
        });
        pending.push(Promise.resolve(deps.onKappFinished?.(r)));
      },
    });
  }

  await Promise.all(pending);
  const counts: Record<KappStatus, number> = { succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
  for (const r of results.values()) counts[r.status]++;
  const status = deps.signal.aborted ? 'cancelled' : loadFailed || counts.failed > 0 ? 'failed' : 'succeeded';
  deps.emit({ type: 'run-finished', time: now(), status, counts, durationMs: Date.now() - started });
  return { status, results };
}
