/**
 * A YAML writer for release records: JSON data (strings, finite numbers, booleans, null, arrays, plain objects)
 * in block style, about ten times faster than building a `yaml` Document and printing it, which matters because
 * a running release is rewritten while kapps finish.
 *
 * The output reads like the `yaml` package's: block maps and sequences (sequences indented under their key),
 * `{}` and `[]` for empty ones, plain scalars where they are unambiguous, literal blocks (`|`, `|-`) for readable
 * multi-line text, and JSON-style double quotes for everything else. A string is left plain only when no YAML
 * 1.1 or 1.2 reader could take it for anything but that string (`yes`, `on`, `~`, `0x1f`, `1_000` and `.inf`
 * are quoted), so the records read back the same with any YAML library.
 */

/** The YAML text of `value` as a document (a block collection or a scalar), ending with a newline. */
export function recordYaml(value: unknown): string {
  const texts: Texts = new Map();
  if (!isCollection(value) || isEmpty(value)) {
    // A multi-line string stays quoted here: a literal block needs a parent to indent under.
    return (typeof value === 'string' && !plainOk(value) ? quoted(value) : inline(value, '', texts)) + '\n';
  }
  return block(value, '', texts);
}

/**
 * The lines of a map of one entry, `key: value`, each line indented by `indent`: the same text as `recordYaml({ [key]:
 * value })` with `indent` put before each line that is not empty.
 */
export function recordYamlEntry(key: string, value: unknown, indent: string): string {
  return block({ [key]: value }, indent, new Map());
}

/**
 * The YAML of each one-line string met so far in this document, as a key or a value (the same text either way): a
 * record repeats the same keys and many of the same values (step names, `true`, `${kapp_dir}`) for every kapp.
 */
type Texts = Map<string, string>;

/** A one-line string as a plain or quoted scalar, looked up first among those already written. */
function oneLine(text: string, texts: Texts): string {
  let written = texts.get(text);
  if (written === undefined) {
    written = plainOk(text) ? text : quoted(text);
    texts.set(text, written);
  }
  return written;
}

type Collection = readonly unknown[] | Readonly<Record<string, unknown>>;

function isCollection(value: unknown): value is Collection {
  return typeof value === 'object' && value !== null;
}

function isEmpty(value: Collection): boolean {
  if (Array.isArray(value)) return value.length === 0;
  const map = value as Readonly<Record<string, unknown>>;
  for (const key in map) if (Object.hasOwn(map, key)) return false;
  return true;
}

/**
 * The lines of a non-empty collection, each starting with `indent`; the first starts with `first` instead when given
 * (a collection that is a sequence item starts on its dash's line). The text is built by appending, which V8 keeps as
 * a rope until it is written: about twice as fast as joining an array of the pieces for a record of 2,000 kapps.
 */
function block(value: Collection, indent: string, texts: Texts, first?: string): string {
  let out = '';
  let lead = first ?? indent;
  if (Array.isArray(value)) {
    const inner = indent + '  ';
    for (const item of value as readonly unknown[]) {
      out += lead + '-';
      lead = indent;
      if (!isCollection(item) || isEmpty(item)) out += ' ' + inline(item, inner, texts) + '\n';
      // A map item starts on the dash's line; a sequence item nests `- - x`.
      else out += block(item, inner, texts, ' ');
    }
    return out;
  }
  const map = value as Readonly<Record<string, unknown>>;
  const inner = indent + '  ';
  for (const key in map) {
    if (!Object.hasOwn(map, key)) continue;
    const child = map[key];
    // As in JSON, a key whose value is undefined is left out.
    if (child === undefined) continue;
    out += lead + oneLine(key, texts) + ':';
    lead = indent;
    // Sequences are indented under their key, as the `yaml` package does by default.
    if (isCollection(child) && !isEmpty(child)) out += '\n' + block(child, inner, texts);
    else out += ' ' + inline(child, inner, texts) + '\n';
  }
  return out;
}

/** A scalar or an empty collection; `indent` is the indentation of a literal block's lines. */
function inline(value: unknown, indent: string, texts: Texts): string {
  switch (typeof value) {
    case 'string':
      return value.includes('\n') ? scalarString(value, indent) : oneLine(value, texts);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${value} is not JSON data`);
      // As JSON does, -0 is written 0.
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return Array.isArray(value) ? '[]' : '{}';
    case 'undefined':
      return 'null';
    default:
      throw new TypeError(`a ${typeof value} is not JSON data`);
  }
}

/**
 * Characters a plain scalar may hold here. It starts with a letter, a digit or one of `_ / $ ^ . (`, or with `-`
 * and a letter or `-` (`--flag`); `:` may appear inside but not before a space or at the end; single spaces
 * separate words. Anything else (`#`, quotes, brackets, `&`, `*`, `!`, `|`, `>`, `@` first, …) is quoted.
 */
const PLAIN = /^(?:[A-Za-z0-9_/$^.(]|-[A-Za-z-])[A-Za-z0-9_./@+=$^()%,~:-]*(?: [A-Za-z0-9_./@+=$^()%,~:-]+)*$/;
/**
 * Plain text a YAML 1.1 or 1.2 reader resolves to something else: null, booleans, numbers (ints with `_`, hex,
 * octal and binary, floats including `.`, `e5` and `.inf`, which some 1.1 readers take for numbers), a document
 * marker, or text with a `: ` or a final `:` (a mapping).
 */
const NOT_STRING =
  /^(?:~|null|Null|NULL|y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$|^[-+]?\.?[0-9]|^[-+]?\.(?:[0-9_.eE]|$)|^[-+]?[eE][-+]?[0-9]|^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$|^---|:$|: /;

/** Whether the writer leaves `text` plain (no YAML reader takes it for anything but that string). */
export function plainOk(text: string): boolean {
  return PLAIN.test(text) && !NOT_STRING.test(text);
}

/**
 * A double-quoted scalar: JSON's escapes are YAML's, and the characters YAML does not allow unescaped (DEL, the
 * C1 controls, U+FFFE, U+FFFF) or that a YAML 1.1 reader takes for line breaks (U+2028, U+2029) are escaped too.
 */
function quoted(text: string): string {
  return JSON.stringify(text).replace(
    /[\u007f-\u009f\u2028\u2029\ufffe\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function scalarString(text: string, indent: string): string {
  if (plainOk(text)) return text;
  if (text.includes('\n') && literalOk(text)) {
    const body = text.endsWith('\n') ? text.slice(0, -1) : text;
    const lines = body.split('\n').map((line) => (line === '' ? '' : indent + line));
    return (text.endsWith('\n') ? '|\n' : '|-\n') + lines.join('\n');
  }
  return quoted(text);
}

/**
 * Whether a multi-line string survives a literal block unchanged: printable characters and tabs only, no line
 * ending in a space or tab, the first line not starting with a space (that would need an indentation indicator),
 * and at most one trailing newline (more would need `|+`).
 */
function literalOk(text: string): boolean {
  if (/^[ \t\n]/.test(text) || text.endsWith('\n\n')) return false;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]|[ \t]\n|[ \t]$/.test(text)) return false;
  return true;
}
