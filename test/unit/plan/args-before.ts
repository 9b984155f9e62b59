/**
 * The `args` tokeniser as it was before it emitted words itself: a scanner that re-quoted the text for shell-quote,
 * then shell-quote's `parse`. Kept only as the oracle of the property test in `args.test.ts`, which checks that
 * `tokeniseArgs` still splits (and rejects) generated text exactly as this did. Not used by kapps.
 */
import { parse } from 'shell-quote';

/** The argument vector, or why the text cannot be split. */
type ArgsResult =
  | { readonly ok: true; readonly args: string[] }
  | { readonly ok: false; readonly message: string; readonly hint?: string };

/** Characters that start a shell operator when unquoted. */
const OPERATOR_CHARS = ';&|<>()';
/** Word separators outside quotes (as go-shellwords: space, tab, CR, LF). */
const SEPARATORS = ' \t\r\n';
/** What Go prints for a missing key: kept as one literal word. */
const NO_VALUE = '<no value>';
/** Text made only of word characters that no rule above treats specially, and separators. */
const PLAIN_WORDS = /^[\w.,:=@%+/\-[\]{} \t\r\n]*$/;
const QUOTE_HINT = 'quote it (e.g. \'|\' or "2>&1") to pass it as an argument';

/** Text that shell-quote reads back as exactly `s`, whatever it contains. */
function literal(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

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

/** Rewrite `text` for shell-quote (see the module comment), or explain why it cannot be split. */
function protect(text: string): { ok: true; text: string } | { ok: false; result: ArgsResult } {
  let out = '';
  let i = 0;
  const bad = (message: string, hint?: string) => ({ ok: false as const, result: fail(message, hint) });
  while (i < text.length) {
    const c = text[i] ?? '';
    if (SEPARATORS.includes(c)) {
      out += c;
      i++;
    } else if (c === '\\') {
      const next = text[i + 1];
      if (next === undefined) return bad('args end with a backslash that escapes nothing');
      if (next === '\n')
        i += 2; // line continuation
      else if (next === '\r' && text[i + 2] === '\n') i += 3;
      else {
        out += literal(next);
        i += 2;
      }
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return bad('args have an unterminated single quote');
      out += text.slice(i, end + 1);
      i = end + 1;
    } else if (c === '"') {
      // Inside double quotes a backslash escapes any character and nothing is expanded (as go-shellwords).
      let content = '';
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\') {
          j++;
          if (j >= text.length) break;
          if (text[j] === '\n') continue;
        }
        content += text[j] ?? '';
      }
      if (j >= text.length) return bad('args have an unterminated double quote');
      out += literal(content);
      i = j + 1;
    } else if (c === '$' && text[i + 1] === '(') {
      const end = closingParen(text, i);
      if (end < 0) return bad("args have a '$(' without its closing ')'");
      out += literal(text.slice(i, end + 1));
      i = end + 1;
    } else if (c === '`') {
      const end = text.indexOf('`', i + 1);
      if (end < 0) return bad('args have an unterminated backtick');
      out += literal(text.slice(i, end + 1));
      i = end + 1;
    } else if (text.startsWith(NO_VALUE, i)) {
      // Go's rendering of a missing variable: reported as a warning by the caller, never an operator.
      out += literal(NO_VALUE);
      i += NO_VALUE.length;
    } else if (OPERATOR_CHARS.includes(c)) {
      const op = operatorAt(text, i);
      return bad(
        `args contain the unquoted shell operator '${op}'; steps run without a shell, so it would not act as one`,
        `${QUOTE_HINT}, or run a shell yourself (command: sh, args: -c '…')`,
      );
    } else if (c === '$' || c === '#' || /\s/.test(c)) {
      out += literal(c);
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return { ok: true, text: out };
}

/**
 * Split `text` into arguments: unquoted space, tab, CR and LF separate words; `'…'` and `"…"` group text and are
 * removed; a backslash outside single quotes escapes the next character (backslash-newline joins lines); a word
 * that is only an empty quoted string (`''`, `""`) is dropped. `$VAR`, `${VAR}`, `$(…)`, backticks, `~`, `#` and
 * glob patterns are kept as written, and so is `<no value>` (a missing variable, warned about elsewhere). Unquoted `;`, `&`, `|`, `<`, `>`, `(`, `)` are an error, as are unterminated
 * quotes and a trailing lone backslash. Blank text gives no arguments.
 */
export function tokeniseArgsBefore(text: string): ArgsResult {
  // Most args are plain words: split them without the general machinery.
  if (PLAIN_WORDS.test(text)) {
    const args = text.split(/[ \t\r\n]+/).filter((w) => w !== '');
    return { ok: true, args };
  }
  const protectedText = protect(text);
  if (!protectedText.ok) return protectedText.result;
  const args: string[] = [];
  for (const entry of parse(protectedText.text)) {
    if (typeof entry === 'string') {
      if (entry !== '') args.push(entry);
    } else if ('pattern' in entry) {
      // shell-quote reports any word with an unquoted or escaped `*`/`?` as a glob; kapps never expands globs.
      args.push(entry.pattern);
    } else if ('op' in entry) {
      return fail(`args contain the unquoted shell operator '${entry.op}'`, QUOTE_HINT);
    } else {
      return fail(`args contain an unquoted '#'`, QUOTE_HINT);
    }
  }
  return { ok: true, args };
}
