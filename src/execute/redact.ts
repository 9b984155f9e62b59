/**
 * Sensitive values (outputs marked `sensitive`) never appear in printed output, events, logs or release state:
 * every string that leaves the executor passes through a `Redactor`.
 */
import { isGoMap, type GoValue } from '../template/value.js';

/** What replaces a sensitive value. */
export const REDACTED = '<sensitive>';

/** Values shorter than this are not redacted (they would blank out ordinary words). */
const MIN_LENGTH = 4;

export class Redactor {
  readonly #secrets = new Set<string>();
  #pattern: RegExp | undefined;

  /** Remember every string (and number) leaf of a sensitive value. */
  add(value: GoValue): void {
    const visit = (v: GoValue): void => {
      if (typeof v === 'string') {
        if (v.length >= MIN_LENGTH) this.#secrets.add(v);
        const trimmed = v.trim();
        if (trimmed !== v && trimmed.length >= MIN_LENGTH) this.#secrets.add(trimmed);
      } else if (typeof v === 'bigint' || typeof v === 'number') {
        const s = String(v);
        if (s.length >= MIN_LENGTH) this.#secrets.add(s);
      } else if (Array.isArray(v)) v.forEach(visit);
      else if (v instanceof Map) for (const x of v.values()) visit(x);
      else if (isGoMap(v)) for (const k in v) visit(v[k] as GoValue);
    };
    visit(value);
    this.#pattern = undefined;
  }

  get empty(): boolean {
    return this.#secrets.size === 0;
  }

  /** The text with every known secret replaced. */
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

  list(items: readonly string[]): string[] {
    return items.map((s) => this.text(s));
  }
}
