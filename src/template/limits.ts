/**
 * Limits that keep one render bounded in memory and time, whatever the template and its data (see
 * docs/templates.md, "Limits"). Functions check the size of a result before building it (`checkResultSize`) and
 * charge the work they do to the render in progress (`chargeWork`); the executor counts its steps and watches the
 * output's size (`stepLimitError`). Errors are FuncErrors, so the executor reports them with the template's
 * location and the function's name.
 */
import { FuncError } from './types.js';

/** The most characters (UTF-16 units) one function may return as a single string. */
export const MAX_STRING_LENGTH = 16 * 1024 * 1024;
/** The most characters one render may produce. */
export const MAX_OUTPUT_LENGTH = 16 * 1024 * 1024;
/** The most items a function may return as one list (`until`, `untilStep`, `seq`, `regexFindAll`, ...). */
export const MAX_LIST_ITEMS = 1_000_000;
/**
 * The most work units one render may do: one per executed template node (text, action, range iteration, ...), one
 * per list item a function produces and one per 64 characters of a string a function builds.
 */
export const MAX_WORK = 10_000_000;

/** The work budget of the render in progress (renders may nest: `tpl`-like functions start their own). */
let current: { work: number } | null = null;

/** Run `fn` as one render with its own work budget. */
export function withRenderBudget<T>(fn: () => T): T {
  const saved = current;
  current = { work: 0 };
  try {
    return fn();
  } finally {
    current = saved;
  }
}

function workError(): FuncError {
  return new FuncError(`render exceeds kapps' limit of ${MAX_WORK} steps (a loop too long or too much data built)`);
}

/** Charge `units` of work to the render in progress; throws once the render has done too much. */
export function chargeWork(units: number): void {
  if (current === null) return;
  current.work += units;
  if (current.work > MAX_WORK) throw workError();
}

/** Throws when a string result of `length` characters (computed before building it) would be too long. */
export function checkResultSize(length: number | bigint): void {
  if (length > MAX_STRING_LENGTH) {
    throw new FuncError(
      `result of ${length} characters exceeds kapps' limit of ${MAX_STRING_LENGTH} characters for one value`,
    );
  }
  chargeWork(Math.ceil(Number(length) / 64));
}

/** Throws when a list result of `count` items (computed before building it) would be too long. */
export function checkListSize(count: number | bigint): void {
  if (count > MAX_LIST_ITEMS) {
    throw new FuncError(`result of ${count} items exceeds kapps' limit of ${MAX_LIST_ITEMS} items for one list`);
  }
  chargeWork(Number(count));
}

/** The check applied to every function's result after the call (a backstop for results built by concatenation). */
export function checkResultValue(v: unknown): void {
  if (typeof v === 'string') {
    if (v.length > MAX_STRING_LENGTH) checkResultSize(v.length);
  } else if (Array.isArray(v) && v.length > MAX_LIST_ITEMS) checkListSize(v.length);
}

/** For the executor, at each step: the error text when the render must stop, else null. */
export function stepLimitError(outputLength: number): string | null {
  if (outputLength > MAX_OUTPUT_LENGTH) {
    return `output exceeds kapps' limit of ${MAX_OUTPUT_LENGTH} characters for one render`;
  }
  if (current === null) return null;
  if (++current.work > MAX_WORK) return workError().message;
  return null;
}
