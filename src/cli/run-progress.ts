/**
 * What the CLI knows of a run while it goes on, from the run's own events: which kapps are running and which step
 * each is on, and which have not started. It words the messages of Ctrl-C (what the run waits for, what a second
 * signal killed), and, when kapps must end before the run does (a second signal, an internal error), it makes
 * the events the run will not get to send, so that every reporter ends its display and summary, and every kapp
 * listed at the start gets its `kapp-finished`.
 */
import type { RunEvent } from '../report/events.js';
import type { KappStatus, Phase } from '../vocabulary.js';

interface Running {
  readonly startedAt: number;
  step?: { readonly phase: Phase; readonly name: string; readonly startedAt: number };
}

/** Follows a run's events. */
export class RunProgress {
  #kapps: readonly string[] = [];
  #startedAt = 0;
  readonly #running = new Map<string, Running>();
  readonly #finished = new Map<string, KappStatus>();
  #ended = false;

  /** Take one event into account. */
  apply(event: RunEvent): void {
    const at = Date.parse(event.time);
    switch (event.type) {
      case 'run-started':
        this.#kapps = event.kapps;
        this.#startedAt = at;
        break;
      case 'kapp-started':
        this.#running.set(event.kapp, { startedAt: at });
        break;
      case 'step-started': {
        const r = this.#running.get(event.kapp);
        if (r) r.step = { phase: event.phase, name: event.step, startedAt: at };
        break;
      }
      case 'step-finished': {
        const r = this.#running.get(event.kapp);
        if (r?.step?.name === event.step && r.step.phase === event.phase) r.step = undefined;
        break;
      }
      case 'kapp-finished':
        this.#running.delete(event.kapp);
        this.#finished.set(event.kapp, event.status);
        break;
      case 'run-finished':
        this.#ended = true;
        break;
      default:
        break;
    }
  }

  /** Whether the run has started and not finished. */
  get active(): boolean {
    return this.#kapps.length > 0 && !this.#ended;
  }

  /** The running kapps, each with the step it runs: `web:a (apply_install/apply)`. */
  runningList(): string[] {
    return [...this.#running].map(([id, r]) => (r.step ? `${id} (${r.step.phase}/${r.step.name})` : id));
  }

  /** The first signal's message: the run stops, and what it waits for. */
  stoppingText(signal: NodeJS.Signals, graceMs: number): string {
    const running = this.runningList();
    const lines = [`${signal}: stopping the run: no new kapp will start.`];
    if (running.length === 0) lines.push('  No step is running.');
    else {
      const steps = [...this.#running.values()].filter((r) => r.step).length;
      lines.push(`  Waiting for ${running.join(', ')} to stop.`);
      if (steps > 0)
        lines.push(
          `  ${steps} running step(s) were sent SIGTERM; whatever is left of them gets SIGKILL after ${seconds(graceMs)}.`,
        );
    }
    lines.push('  Press Ctrl-C again to kill them at once.');
    return lines.join('\n');
  }

  /** The second signal's message: what was killed. */
  killedText(signal: NodeJS.Signals, groups: number): string {
    const running = this.runningList();
    if (running.length === 0) return `${signal} again: stopping at once (no step was running).`;
    return `${signal} again: killed (SIGKILL) ${running.join(', ')}${groups > 0 ? ` (${groups} process group(s))` : ''}.`;
  }

  /**
   * The events that end the run now: each running step and kapp `cancelled` with `reason`, each kapp not started
   * `skipped`, and `run-finished` (status `cancelled`, or `failed` for `status: 'failed'`). Applies them too.
   */
  endNow(reason: string, status: 'cancelled' | 'failed' = 'cancelled'): RunEvent[] {
    if (!this.active) return [];
    const now = Date.now();
    const time = new Date(now).toISOString();
    const events: RunEvent[] = [];
    for (const [kapp, r] of this.#running) {
      if (r.step) {
        events.push({
          type: 'step-finished',
          time,
          kapp,
          phase: r.step.phase,
          step: r.step.name,
          status: 'cancelled',
          exitCode: null,
          signal: 'SIGKILL',
          durationMs: now - r.step.startedAt,
          reason,
        });
      }
      events.push({ type: 'kapp-finished', time, kapp, status: 'cancelled', reason, durationMs: now - r.startedAt });
    }
    for (const kapp of this.#kapps) {
      if (this.#running.has(kapp) || this.#finished.has(kapp)) continue;
      events.push({
        type: 'kapp-finished',
        time,
        kapp,
        status: 'skipped',
        reason: 'not started: the run was cancelled',
        durationMs: 0,
      });
    }
    for (const e of events) this.apply(e);
    const counts = { succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
    for (const s of this.#finished.values()) counts[s] += 1;
    const finished: RunEvent = { type: 'run-finished', time, status, counts, durationMs: now - this.#startedAt };
    this.apply(finished);
    events.push(finished);
    return events;
  }
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
