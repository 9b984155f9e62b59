/**
 * Opt-in timings of one run (`KAPPS_TIMINGS=<file>`): where the milliseconds of a command go, from start-up to
 * exit and through each kapp's visit. The driver (the CLI) creates a `Timings` per run and hands it down in the
 * engine's context; every layer that measures asks for it there (`timings?.…`), so that a run without it pays
 * nothing but an absent field. Times are milliseconds since the process started (`performance.now()`).
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export type TimingFields = Readonly<Record<string, string | number | boolean>>;

/** What the layers of a run write their measurements to. */
export interface Timings {
  /** Milliseconds since the process started. */
  now(): number;
  /** A finished span: `name` from `start` until now, with what else says what it was. */
  span(name: string, start: number, fields?: TimingFields): void;
  /** Add `ms` to a part of a kapp's time (events shown, the release recorder's write…), summed over the run. */
  add(kapp: string, part: string, ms: number): void;
}

/** Run `work` as the span `name` (when there are timings). */
export async function timed<T>(
  timings: Timings | undefined,
  name: string,
  work: () => Promise<T> | T,
  fields?: TimingFields,
): Promise<T> {
  if (!timings) return work();
  const start = timings.now();
  try {
    return await work();
  } finally {
    timings.span(name, start, fields);
  }
}

interface SpanRecord {
  span: string;
  start: number;
  ms: number;
  [field: string]: string | number | boolean;
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

/**
 * The timings of one run, kept in memory and written as NDJSON (one JSON object a line) at its end: the spans in
 * the order they ended, each kapp's summed parts added to its last `visit` record (a `kapp` record when it had no
 * visit).
 */
export class TimingsLog implements Timings {
  readonly #records: SpanRecord[] = [];
  readonly #parts = new Map<string, Map<string, number>>();

  now(): number {
    return performance.now();
  }

  span(name: string, start: number, fields?: TimingFields): void {
    this.#records.push({ span: name, start: round(start), ms: round(this.now() - start), ...fields });
  }

  add(kapp: string, part: string, ms: number): void {
    let parts = this.#parts.get(kapp);
    if (!parts) this.#parts.set(kapp, (parts = new Map<string, number>()));
    parts.set(part, (parts.get(part) ?? 0) + ms);
  }

  /** The records, as the file holds them. */
  records(): Record<string, string | number | boolean>[] {
    const out: Record<string, string | number | boolean>[] = this.#records.map((r) => ({ ...r }));
    const lastVisit = new Map<string, Record<string, string | number | boolean>>();
    for (const r of out) if (r.span === 'visit' && typeof r.kapp === 'string') lastVisit.set(r.kapp, r);
    for (const [kapp, parts] of this.#parts) {
      const target = lastVisit.get(kapp) ?? { span: 'kapp', kapp };
      for (const [part, ms] of parts) target[part] = round(ms);
      if (!lastVisit.has(kapp)) out.push(target);
    }
    return out;
  }

  /** Write the records to `file` (replacing it). */
  write(file: string): void {
    writeFileSync(
      file,
      this.records()
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    );
  }
}
