/**
 * Sensitivity carried through rendering, as Terraform does it: a value computed from a sensitive value is
 * sensitive. While a watch is set (a run with sensitive values), the executor asks it about every value a function
 * receives: when one is sensitive, the function's result is reported as derived (its text, or each string and
 * number in it), so that it is sensitive in turn, and every text an action prints from a sensitive value is
 * reported too. The watch (the run's redactor) remembers those texts and redacts them, so redaction does not
 * depend on the exact text of the secret: `upper`, `b64enc`, `printf "%v"` of a float, `trunc` and the like are
 * covered. The watch travels with the run in its render context (`scope.ts`), never in a shared variable: two runs
 * at once each have their own.
 *
 * Selection functions (`index`, `get`, `dig`, ...) applied to a map or list holding a sensitive value pass on only
 * what they select: the rest of the map is not made sensitive. What is not covered: a value chosen by a condition
 * on a secret (`{{ if eq .token "x" }}yes{{ end }}` prints `yes`), and text shorter than the redactor's minimum.
 */
import type { GoValue } from '../go-value/value.js';

/** What the executor reports sensitive values to. */
export interface SensitivityWatch {
  /** Whether a value is sensitive: a sensitive text or number, or a map or list holding one. */
  isSensitive(value: GoValue): boolean;
  /** A value computed from a sensitive value (a function result, an action's printed text). */
  derived(value: GoValue): void;
}

/** Functions whose result is a part of their (map or list) argument, not computed from all of it. */
export const SELECTORS: ReadonlySet<string> = new Set([
  'index',
  'get',
  'dig',
  'first',
  'last',
  'rest',
  'initial',
  'pluck',
  'pick',
  'omit',
  'keys',
  'hasKey',
  'len',
  'empty',
]);
