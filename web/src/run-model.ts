/**
 * What a run page shows, folded from the run's event stream: each kapp's state and steps, the log, the failing
 * step. Pure data; the page applies it to the DAG and the lists once per animation frame.
 */
import type { LogLine, Run } from './api';

export const KAPP_STATES = [
  'waiting',
  'queued',
  'running',
  'succeeded',
  'failed',
  'skipped',
  'cancelled',
  'unfinished',
] as const;
export type KappState = (typeof KAPP_STATES)[number];

/** A sign beside the colour, so colour is never the only sign of a state. */
export const STATE_ICONS: Record<KappState, string> = {
  waiting: '…',
  queued: '◔',
  running: '▶',
  succeeded: '✓',
  failed: '✗',
  skipped: '↷',
  cancelled: '■',
  unfinished: '⊘',
};

export interface StepView {
  phase: string;
  name: string;
  status: string;
  exitCode: number | null;
  durationMs: number | null;
  reason?: string;
  outputTail?: readonly string[];
}

export interface KappView {
  id: string;
  dependsOn: readonly string[];
  state: KappState;
  reason?: string;
  steps: StepView[];
}

export interface RunModel {
  started: boolean;
  phases: readonly string[];
  kapps: Map<string, KappView>;
  /** Kapp → the kapps that depend on it. */
  dependents: Map<string, string[]>;
  /** Kapps in the order of `run-started`. */
  order: string[];
  log: LogLine[];
  /** The first failed step: its kapp, step and last lines. */
  failure: { kapp: string; step: StepView } | null;
  status: Run | null;
  /** Kapps whose state changed since the last `takeDirty`. */
  dirty: Set<string>;
  /** Whether the set of kapps changed (a new DAG to lay out). */
  graphChanged: boolean;
  counts: { succeeded: number; failed: number; skipped: number; cancelled: number } | null;
}

export function emptyModel(): RunModel {
  return {
    started: false,
    phases: [],
    kapps: new Map(),
    dependents: new Map(),
    order: [],
    log: [],
    failure: null,
    status: null,
    dirty: new Set(),
    graphChanged: false,
    counts: null,
  };
}

interface AnyEvent {
  type: string;
  kapp?: string;
  kapps?: string[];
  dependsOn?: Record<string, string[]>;
  phases?: string[];
  phase?: string;
  step?: string;
  status?: string;
  exitCode?: number | null;
  durationMs?: number;
  reason?: string;
  outputTail?: string[];
  counts?: RunModel['counts'];
}

/** Fold one message of the event stream into the model. */
export function applyMessage(model: RunModel, event: string, data: unknown): void {
  if (event === 'log') model.log.push(data as LogLine);
  else if (event === 'status') {
    model.status = data as Run;
    finalise(model, model.status.status);
  } else if (event === 'run-event') applyRunEvent(model, data as AnyEvent);
}

function applyRunEvent(model: RunModel, e: AnyEvent): void {
  switch (e.type) {
    case 'run-started': {
      // A run may have several walks (preview's refresh, an apply's plan and apply): keep the kapps seen so far.
      model.started = true;
      model.phases = e.phases ?? [];
      for (const id of e.kapps ?? []) {
        const existing = model.kapps.get(id);
        if (existing) {
          existing.state = 'waiting';
          existing.reason = undefined;
        } else {
          const dependsOn = e.dependsOn?.[id] ?? [];
          model.kapps.set(id, { id, dependsOn, state: 'waiting', steps: [] });
          for (const d of dependsOn) {
            const list = model.dependents.get(d);
            if (list) list.push(id);
            else model.dependents.set(d, [id]);
          }
          model.order.push(id);
          model.graphChanged = true;
        }
        model.dirty.add(id);
      }
      markQueued(model, model.order);
      return;
    }
    case 'kapp-started':
      setState(model, e.kapp, 'running');
      return;
    case 'step-started': {
      const k = kapp(model, e.kapp);
      k.steps.push({ phase: e.phase ?? '', name: e.step ?? '', status: 'running', exitCode: null, durationMs: null });
      if (k.state !== 'running') setState(model, e.kapp, 'running');
      model.dirty.add(k.id);
      return;
    }
    case 'step-finished': {
      const k = kapp(model, e.kapp);
      let step = [...k.steps].reverse().find((s) => s.name === e.step && s.phase === e.phase && s.status === 'running');
      if (!step) {
        step = { phase: e.phase ?? '', name: e.step ?? '', status: 'running', exitCode: null, durationMs: null };
        k.steps.push(step);
      }
      step.status = e.status ?? 'succeeded';
      step.exitCode = e.exitCode ?? null;
      step.durationMs = e.durationMs ?? null;
      if (e.reason) step.reason = e.reason;
      if (e.outputTail) step.outputTail = e.outputTail;
      if (step.status === 'failed' && !model.failure) model.failure = { kapp: k.id, step };
      model.dirty.add(k.id);
      return;
    }
    case 'kapp-finished': {
      const status = e.status as KappState;
      setState(model, e.kapp, status, e.reason);
      if (status === 'succeeded') markQueued(model, model.dependents.get(e.kapp ?? '') ?? []);
      return;
    }
    case 'run-finished':
      if (e.counts) model.counts = e.counts;
      if (e.status === 'cancelled') finalise(model, 'cancelled');
      return;
    default:
      return;
  }
}

/**
 * A run that ended leaves nothing waiting, queued or running: a cancelled run's unfinished kapps were cancelled; a
 * run that failed, errored (its server died under it), was rejected or went stale left them unfinished. Other
 * statuses change nothing.
 */
export function finalise(model: RunModel, status: string): void {
  if (!['succeeded', 'failed', 'cancelled', 'errored', 'rejected', 'stale'].includes(status)) return;
  for (const k of model.kapps.values())
    if (k.state === 'waiting' || k.state === 'queued' || k.state === 'running')
      setState(model, k.id, status === 'cancelled' ? 'cancelled' : 'unfinished', k.reason);
}

function kapp(model: RunModel, id: string | undefined): KappView {
  const key = id ?? '?';
  let k = model.kapps.get(key);
  if (!k) {
    k = { id: key, dependsOn: [], state: 'waiting', steps: [] };
    model.kapps.set(key, k);
    model.order.push(key);
    model.graphChanged = true;
  }
  return k;
}

function setState(model: RunModel, id: string | undefined, state: KappState, reason?: string): void {
  const k = kapp(model, id);
  if (k.state === state && k.reason === reason) return;
  k.state = state;
  k.reason = reason;
  model.dirty.add(k.id);
}

/** A waiting kapp whose dependencies all succeeded is queued for a worker. */
function markQueued(model: RunModel, ids: readonly string[]): void {
  for (const id of ids) {
    const k = model.kapps.get(id);
    if (k?.state !== 'waiting') continue;
    if (k.dependsOn.every((d) => (model.kapps.get(d)?.state ?? 'succeeded') === 'succeeded')) {
      k.state = 'queued';
      model.dirty.add(k.id);
    }
  }
}
