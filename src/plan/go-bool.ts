/**
 * Truthiness of conditions. A condition is rendered text that must spell a Go boolean exactly as Go's
 * `strconv.ParseBool` accepts it; anything else is a configuration error, never "false", so that a typo or a
 * missing variable (`<no value>`) cannot silently switch a kapp, unit, step or output off.
 */
import { error, type Diagnostic, type SourceLocation } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';

const TRUE_WORDS: ReadonlySet<string> = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE_WORDS: ReadonlySet<string> = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** The spellings `parseGoBool` accepts, for hints. */
export const GO_BOOL_SPELLINGS = '1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False';

/**
 * Go's `strconv.ParseBool`: `1 t T TRUE true True` are true, `0 f F FALSE false False` are false, and any other
 * text (including surrounding spaces, `yes`, `on`, `<no value>` and the empty string) is undefined.
 */
export function parseGoBool(text: string): boolean | undefined {
  if (TRUE_WORDS.has(text)) return true;
  if (FALSE_WORDS.has(text)) return false;
  return undefined;
}

/** Where a list of conditions belongs, for the diagnostic printed when one of them is not a Go boolean. */
export interface ConditionSite {
  /** The kapp's fully-qualified id, `manifest:kapp`. */
  readonly kapp: string;
  /**
   * What owns the conditions inside the kapp, e.g. `run unit 'helm'`, `step 'install' of run unit 'helm'`,
   * `output 'kubeconfig'`, `dependency 'web:db'`; omitted for the kapp's own conditions.
   */
  readonly owner?: string;
  /** Where each condition was written, by index; a missing entry falls back to `location`. */
  readonly conditionLocations?: readonly (SourceLocation | undefined)[];
  /** Where the `conditions` list (or its owner) was written (may be a getter: read for a diagnostic only). */
  readonly location?: SourceLocation | undefined;
}

/** `1st`, `2nd`, `3rd`, `4th`, … `11th`, `21st`. */
export function ordinal(n: number): string {
  const mod100 = n % 100;
  const suffix = mod100 >= 11 && mod100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

/** The diagnostic for condition `index` (0-based) of `where` whose rendered text is `text`. */
export function conditionDiagnostic(text: string, index: number, where: ConditionSite): Diagnostic {
  const owner = where.owner ? `${where.owner} of ` : '';
  const location = where.conditionLocations?.[index] ?? where.location;
  return error(
    `the ${ordinal(index + 1)} condition of ${owner}kapp '${where.kapp}' is not true or false: it rendered as ${JSON.stringify(text)}`,
    location,
    { hint: `a condition must render to exactly one of ${GO_BOOL_SPELLINGS}` },
  );
}

/**
 * True when every condition is a Go true, false when at least one is a Go false; an empty list is true. Every
 * element is checked, even after a false one, and a `ConfigError` listing each element that is not a Go boolean
 * is thrown.
 */
export function evaluateConditions(conds: readonly string[], where: ConditionSite): boolean {
  let result = true;
  const problems: Diagnostic[] = [];
  conds.forEach((text, index) => {
    const value = parseGoBool(text);
    if (value === undefined) problems.push(conditionDiagnostic(text, index, where));
    else if (!value) result = false;
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return result;
}
