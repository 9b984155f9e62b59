/**
 * Sensitive values (outputs marked `sensitive`) never appear in printed output, events, logs or release state:
 * every event that leaves the executor passes through a `Redactor`, which replaces each known secret by
 * `<sensitive>`.
 *
 * A secret of several lines (a key, a certificate) is also remembered line by line, since output is shown and
 * redacted a line at a time. Values shorter than four characters are not redacted: they would blank out ordinary
 * words and numbers everywhere.
 */
import type { RunEvent } from '../report/events.js';
import { GoIfaceMap, isGoMap, newGoMap, type GoValue } from '../template/value.js';

/** What replaces a sensitive value. */
export const REDACTED = '<sensitive>';

/** Values shorter than this are not redacted. */
const MIN_LENGTH = 4;

/** Remembers secrets and removes them from text. */
export class Redactor {
  readonly #secrets = new Set<string>();
  #pattern: RegExp | undefined;

  /** Remember every string (and number) leaf of a sensitive value. */
  add(value: GoValue): void {
    const visit = (v: GoValue): void => {
      if (typeof v === 'string') this.#addText(v);
      else if (typeof v === 'bigint' || typeof v === 'number') this.#addText(String(v));
      else if (Array.isArray(v)) v.forEach(visit);
      else if (v instanceof Map) for (const x of v.values()) visit(x);
      else if (isGoMap(v)) for (const k in v) visit(v[k] as GoValue);
    };
    visit(value);
    this.#pattern = undefined;
  }

  #addText(text: string): void {
    // Surrounding whitespace is not secret: leaving it keeps the line breaks of the text being redacted.
    for (const candidate of [text.trim(), ...text.split(/\r?\n/).map((l) => l.trim())]) {
      if (candidate.length >= MIN_LENGTH) this.#secrets.add(candidate);
    }
  }

  /** True while no secret is known. */
  get empty(): boolean {
    return this.#secrets.size === 0;
  }

  /** The text with every known secret replaced (longest first, so a secret containing another goes whole). */
  text(s: string): string {
    if (this.#secrets.size === 0 || s === '') return s;
    this.#pattern ??= new RegExp(
      [...this.#secrets]
        .sort((a, b) => b.length - a.length)
        .map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('|'),
      'g',
    );
    return s.replace(this.#pattern, REDACTED);
  }

  /** Each text redacted. */
  list(items: readonly string[]): string[] {
    return items.map((s) => this.text(s));
  }

  /** A copy of a value with every string in it redacted (for ordinary outputs that pass a secret on). */
  value(v: GoValue): GoValue {
    if (this.#secrets.size === 0) return v;
    if (typeof v === 'string') return this.text(v);
    if (Array.isArray(v)) return v.map((x) => this.value(x));
    if (v instanceof GoIfaceMap) {
      const out = new GoIfaceMap();
      for (const [k, x] of v) out.set(k, this.value(x));
      return out;
    }
    if (isGoMap(v)) {
      const out = newGoMap();
      for (const k in v) out[k] = this.value(v[k] as GoValue);
      return out;
    }
    return v;
  }
}

/** The event with every free text in it redacted (identifiers such as kapp and step names are left alone). */
export function redactEvent(event: RunEvent, redactor: Redactor): RunEvent {
  if (redactor.empty) return event;
  switch (event.type) {
    case 'step-started':
      return {
        ...event,
        command: redactor.text(event.command),
        args: redactor.list(event.args),
        workingDir: redactor.text(event.workingDir),
      };
    case 'step-output':
      return { ...event, text: redactor.text(event.text) };
    case 'step-finished':
      return {
        ...event,
        ...(event.reason !== undefined ? { reason: redactor.text(event.reason) } : {}),
        ...(event.outputTail !== undefined ? { outputTail: redactor.list(event.outputTail) } : {}),
      };
    case 'kapp-finished':
      return event.reason !== undefined ? { ...event, reason: redactor.text(event.reason) } : event;
    case 'log':
      return { ...event, message: redactor.text(event.message) };
    case 'run-started':
    case 'kapp-started':
    case 'run-finished':
      return event;
  }
}
