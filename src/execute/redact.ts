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
import type { SensitivityWatch } from '../template/sensitivity.js';
import { GoIfaceMap, isGoMap, newGoMap, type GoValue } from '../go-value/value.js';

/** What replaces a sensitive value. */
export const REDACTED = '<sensitive>';

/** Values shorter than this are not redacted. */
const MIN_LENGTH = 4;

/** Remembers secrets and removes them from text; also the watch of sensitivity in template rendering. */
export class Redactor implements SensitivityWatch {
  readonly #secrets = new Set<string>();
  /** Every sensitive leaf, whatever its length, as text: what makes a value rendered by a template sensitive. */
  readonly #leaves = new Set<string>();
  /** Whether a map or list holds a sensitive leaf, by identity (forgotten whenever a secret is added). */
  #holds = new WeakMap<object, boolean>();
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
    this.#holds = new WeakMap();
  }

  /** A value computed from a sensitive value: sensitive too (booleans and nil say too little to matter). */
  derived(value: GoValue): void {
    this.add(value);
  }

  /** Whether a value is sensitive: a sensitive leaf, or a map or list holding one. */
  isSensitive(value: GoValue): boolean {
    if (this.#leaves.size === 0 || value === null || typeof value === 'boolean') return false;
    if (typeof value === 'string') return this.#leaves.has(value) || this.#leaves.has(value.trim());
    if (typeof value === 'number' || typeof value === 'bigint') return this.#leaves.has(String(value));
    if (typeof value !== 'object') return false;
    const known = this.#holds.get(value);
    if (known !== undefined) return known;
    this.#holds.set(value, false); // a value that holds itself is not looked into twice
    let holds = false;
    if (Array.isArray(value)) holds = value.some((x) => this.isSensitive(x));
    else if (value instanceof Map) for (const x of value.values()) holds ||= this.isSensitive(x);
    else if (isGoMap(value)) for (const k in value) holds ||= this.isSensitive(value[k] as GoValue);
    this.#holds.set(value, holds);
    return holds;
  }

  #addText(text: string): void {
    this.#leaves.add(text);
    this.#leaves.add(text.trim());
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
