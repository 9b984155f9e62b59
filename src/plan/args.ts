/**
 * Splitting a step's `args` text into an argument vector, the way a shell splits words but without anything a
 * shell would expand or execute. Steps run without a shell, so an unquoted operator (`|`, `>`, `&&`, …) could
 * never do what it looks like it does: it is reported instead of being dropped.
 *
 * One left-to-right scanner does the whole job: word splitting, quote removal, backslash escapes, and keeping
 * `$…`, `$(…)`, backticks, `#` and `<no value>` literal. (shell-quote's `parse` is not used: it expands `$VAR`,
 * reads `$'…'`, `#` comments and any Unicode space the way bash does, and keeps the backslash in `"\h"`, all unlike
 * go-shellwords; see docs/planning.md.)
 */

/** The argument vector, or why the text cannot be split. */
export type ArgsResult =
  | { readonly ok: true; readonly args: string[] }
  | { readonly ok: false; readonly message: string; readonly hint?: string };

/** Characters that start a shell operator when unquoted. */
const OPERATOR_CHARS = ';&|<>()';
/** Word separators outside quotes (as go-shellwords: space, tab, CR, LF). */
const SEPARATORS = ' \t\r\n';
/** What Go prints for a missing key: kept as one literal word. */
const NO_VALUE = '<no value>';
const QUOTE_HINT = 'quote it (e.g. \'|\' or "2>&1") to pass it as an argument';

function fail(message: string, hint?: string): ArgsResult {
  return hint === undefined ? { ok: false, message } : { ok: false, message, hint };
}

/** The operator as written around index `i`: `2>&1`, `>>`, `&&`, `|`… */
function operatorAt(text: string, i: number): string {
  let start = i;
  while (start > 0 && /[0-9]/.test(text[start - 1] ?? '')) start--;
  // A leading file-descriptor number belongs to the operator only when it starts the word (`2>`, not `a2>`).
  if (start > 0 && !SEPARATORS.includes(text[start - 1] ?? '')) start = i;
  let end = i;
  while (end < text.length && OPERATOR_CHARS.includes(text[end] ?? '')) end++;
  if (/[<>]&$/.test(text.slice(i, end))) {
    while (end < text.length && /[0-9-]/.test(text[end] ?? '')) end++;
  }
  return text.slice(start, end);
}

/** Index of the `)` closing the `$(` at `i`, or -1. Quotes inside are not interpreted. */
function closingParen(text: string, i: number): number {
  let depth = 0;
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '(') depth++;
    else if (text[j] === ')' && --depth === 0) return j;
  }
  return -1;
}

/**
 * The text of the double-quoted string whose opening `"` is at `i`, and the index after its closing `"`; undefined
 * when it is not closed. Inside, a backslash escapes any character and backslash-newline is removed; nothing is
 * expanded (as go-shellwords).
 */
function doubleQuoted(text: string, i: number): { content: string; next: number } | undefined {
  let content = '';
  let j = i + 1;
  for (; j < text.length && text[j] !== '"'; j++) {
    if (text[j] === '\\') {
      j++;
      if (j >= text.length) return undefined;
      if (text[j] === '\n') continue;
    }
    content += text[j] ?? '';
  }
  return j >= text.length ? undefined : { content, next: j + 1 };
}

/**
 * Split `text` into arguments: unquoted space, tab, CR and LF separate words; `'…'` and `"…"` group text and are
 * removed; a backslash outside single quotes escapes the next character (backslash-newline joins lines); a word
 * that is only an empty quoted string (`''`, `""`) is dropped. `$VAR`, `${VAR}`, `$(…)`, backticks, `~`, `#` and
 * glob patterns are kept as written, and so is `<no value>` (a missing variable, warned about elsewhere). Unquoted
 * `;`, `&`, `|`, `<`, `>`, `(`, `)` are an error, as are unterminated quotes and a trailing lone backslash. Blank
 * text gives no arguments.
 */
export function tokeniseArgs(text: string): ArgsResult {
  const args: string[] = [];
  let word = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i] ?? '';
    if (SEPARATORS.includes(c)) {
      if (word !== '') args.push(word);
      word = '';
      i++;
    } else if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) return fail('args end with a backslash that escapes nothing');
      if (next === '\n') {
        i += 2; // line continuation
      } else if (next === '\r' && text[i + 2] === '\n') {
        i += 3;
      } else {
        word += next;
        i += 2;
      }
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return fail('args have an unterminated single quote');
      word += text.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      const quoted = doubleQuoted(text, i);
      if (quoted === undefined) return fail('args have an unterminated double quote');
      word += quoted.content;
      i = quoted.next;
    } else if (c === '$' && text[i + 1] === '(') {
      const end = closingParen(text, i);
      if (end < 0) return fail("args have a '$(' without its closing ')'");
      word += text.slice(i, end + 1);
      i = end + 1;
    } else if (c === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) return fail('args have an unterminated backtick');
      word += text.slice(i, end + 1);
      i = end + 1;
    } else if (text.startsWith(NO_VALUE, i)) {
      // Go's rendering of a missing variable: reported as a warning by the caller, never an operator.
      word += NO_VALUE;
      i += NO_VALUE.length;
    } else if (OPERATOR_CHARS.includes(c)) {
      return fail(
        `args contain the unquoted shell operator '${operatorAt(text, i)}'; steps run without a shell, so it would not act as one`,
        `${QUOTE_HINT}, or run a shell yourself (command: sh, args: -c '…')`,
      );
    } else {
      word += c;
      i++;
    }
  }
  if (word !== '') args.push(word);
  return { ok: true, args };
}
