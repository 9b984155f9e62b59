/**
 * The syntax tree and errors of Go regular expressions (see regexp-syntax.ts).
 */

/** A regexp syntax error with Go's code text and the offending part of the expression. */
export class RegexpSyntaxError extends Error {
  constructor(
    readonly code: string,
    readonly expr: string,
  ) {
    super(`error parsing regexp: ${code}: \`${expr}\``);
    this.name = 'RegexpSyntaxError';
  }
}

/** Go's error codes (regexp/syntax.ErrorCode texts). */
export const E = {
  invalidCharClass: 'invalid character class',
  invalidCharRange: 'invalid character class range',
  invalidEscape: 'invalid escape sequence',
  invalidNamedCapture: 'invalid named capture',
  invalidPerlOp: 'invalid or unsupported Perl syntax',
  invalidRepeatOp: 'invalid nested repetition operator',
  invalidRepeatSize: 'invalid repeat count',
  missingBracket: 'missing closing ]',
  missingParen: 'missing closing )',
  missingRepeatArgument: 'missing argument to repetition operator',
  trailingBackslash: 'trailing backslash at end of expression',
  unexpectedParen: 'unexpected )',
  nestingDepth: 'expression nests too deeply',
} as const;

/** A character class: sorted, merged code-point ranges plus Unicode property escapes (for `\pL` etc.). */
export interface CharClass {
  /** Pairs lo, hi (inclusive). */
  ranges: number[];
  /** JavaScript property escapes (`\p{L}`, `\P{Script=Greek}`) that are part of the class. */
  /** The class matches everything *not* in ranges. */
  negated: boolean;
}

/** A node of the syntax tree. */
export type RegexpNode =
  | { op: 'empty' }
  | { op: 'literal'; rune: number; fold: boolean }
  | { op: 'class'; cls: CharClass }
  | { op: 'anyChar'; dotNL: boolean }
  | { op: 'beginLine' | 'endLine' | 'beginText' | 'endText' | 'wordBoundary' | 'noWordBoundary' }
  | { op: 'capture'; index: number; name: string; sub: RegexpNode }
  | { op: 'repeat'; min: number; max: number; greedy: boolean; sub: RegexpNode }
  | { op: 'concat'; subs: RegexpNode[] }
  | { op: 'alternate'; subs: RegexpNode[] };

/** A parsed expression with its capture-group names (index 0 is the whole match, named ""). */
export interface ParsedRegexp {
  root: RegexpNode;
  names: string[];
  /** Where each `(?P<name>` opener is in the source: [start, end). */
  namedOpeners: [number, number][];
}

/** The flags in force at a point of the pattern: (?i), (?s), not (?m), (?U). */
export interface Flags {
  fold: boolean;
  dotNL: boolean;
  oneLine: boolean;
  nonGreedy: boolean;
}
