/**
 * Schema validation of a located YAML tree: the tree is turned into a plain view (maps → objects keyed by key
 * text, YAML ints → numbers, null-valued map entries dropped as yaml.v2 leaves such fields unset), checked once
 * with zod, and every zod issue becomes a `Diagnostic` at the offending key or value, with the field path and, for
 * an unknown key, a "did you mean" hint.
 */
import * as z from 'zod';
import { error as errorDiag, warning as warningDiag } from '../diagnostics/diagnostic.js';
import type { Diagnostic, SourceLocation } from '../diagnostics/diagnostic.js';
import { didYouMean } from '../diagnostics/did-you-mean.js';
import { fastCheckOf } from './fast-check.js';
import { mapEntry, nodeKindName, type YamlNode } from '../yaml/read.js';

/** A field path inside a file. */
export type FieldPath = readonly (string | number)[];

/** `kapps[2].run_units.helm.apply_install[0].timeout` */
export function formatPath(path: FieldPath): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out === '' ? seg : `.${seg}`;
  return out;
}

/** The plain data zod validates. */
type View = null | string | number | boolean | View[] | { [key: string]: View };

function toView(node: YamlNode): View {
  switch (node.kind) {
    case 'scalar': {
      const v = node.value;
      if (typeof v === 'bigint') return Number(v);
      if (typeof v === 'number' && !Number.isFinite(v)) return node.text;
      return v as string | number | boolean | null;
    }
    case 'seq':
      return node.items.map(toView);
    case 'map': {
      // A plain object: null-prototype objects are much slower to build, and this view is thrown away.
      const out: { [key: string]: View } = {};
      for (const e of node.entries) {
        if (e.value.kind === 'scalar' && e.value.value === null) continue;
        const key = e.key.text;
        if (key === '__proto__') Object.defineProperty(out, key, { value: toView(e.value), enumerable: true });
        else out[key] = toView(e.value);
      }
      return out;
    }
  }
}

/** The node at `path` below `root`, if present. */
function nodeAt(root: YamlNode, path: FieldPath): YamlNode | undefined {
  let node: YamlNode | undefined = root;
  for (const seg of path) {
    if (!node) return undefined;
    if (node.kind === 'map' && typeof seg === 'string') node = mapEntry(node, seg)?.value;
    else if (node.kind === 'seq' && typeof seg === 'number') node = node.items[seg];
    else return undefined;
  }
  return node;
}

/** The keys an object schema at `path` allows (for suggestions). */
function allowedKeysAt(schema: z.ZodType, path: FieldPath): string[] {
  let s: z.ZodType | undefined = schema;
  const unwrap = (t: z.ZodType | undefined): z.ZodType | undefined => {
    let cur = t;
    while (cur instanceof z.ZodOptional || cur instanceof z.ZodNullable) cur = cur.unwrap() as z.ZodType;
    return cur;
  };
  for (const seg of path) {
    s = unwrap(s);
    if (s instanceof z.ZodObject && typeof seg === 'string') s = (s.shape as Record<string, z.ZodType>)[seg];
    else if (s instanceof z.ZodArray) s = s.element as z.ZodType;
    else if (s instanceof z.ZodRecord) s = s.valueType as z.ZodType;
    else return [];
  }
  s = unwrap(s);
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

const ZOD_TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean (true or false)',
  array: 'a list',
  object: 'a map',
  record: 'a map',
};

/** Options of `validateTree`. */
export interface ValidateOptions {
  readonly file: string;
  /** Path of the validated node inside its file (e.g. the stack name), prefixed to every reported path. */
  readonly basePath?: FieldPath;
  /** Whether unknown keys are errors (manifests, sugarkube.yaml) or warnings (stack files, sugarkube-conf.yaml). */
  readonly unknownKeys: 'error' | 'warning';
  /** Replace the message/hint for an unknown key (e.g. descriptor fields a program ignores). */
  readonly describeUnknownKey?: (path: FieldPath, key: string) => { message: string; hint?: string } | undefined;
}

/** Hints for common mistakes, keyed by what was found where. */
function hintFor(path: FieldPath, node: YamlNode | undefined): string | undefined {
  const last = path[path.length - 1];
  const parent = path[path.length - 2];
  if (last === 'templates' && node?.kind === 'seq') return 'templates is a map keyed by template id';
  if (last === 'args' && node?.kind === 'seq') return 'args is a single command line, e.g. `args: upgrade --install x`';
  if (parent === 'depends_on' && node?.kind === 'scalar') return 'write each dependency as `- id: <kapp id>`';
  if (last === 'kapps' && node?.kind === 'map') return 'kapps is a list: start each kapp with `- id: <kapp id>`';
  return undefined;
}

/**
 * Validate `node` (null for an empty file) against `schema`; returns every problem found, in file order.
 */
export function validateTree(schema: z.ZodType, node: YamlNode | null, options: ValidateOptions): Diagnostic[] {
  // A valid tree (the usual case) is confirmed without building the view; zod finds and words the problems.
  if (node && fastCheckOf(schema)?.(node)) return [];
  return zodProblems(schema, node, options);
}

/** `validateTree` without the quick check: the view checked by zod, every issue a diagnostic. */
export function zodProblems(schema: z.ZodType, node: YamlNode | null, options: ValidateOptions): Diagnostic[] {
  const view: View = node ? toView(node) : (Object.create(null) as View);
  const result = schema.safeParse(view);
  if (result.success) return [];
  const base = options.basePath ?? [];
  const fileLoc: SourceLocation = { file: options.file, line: 1, column: 1 };
  const out: Diagnostic[] = [];
  for (const issue of result.error.issues) {
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    const at = node ? nodeAt(node, path) : undefined;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const entry = at?.kind === 'map' ? mapEntry(at, key) : undefined;
        const loc = entry?.key.loc ?? at?.loc ?? fileLoc;
        const custom = options.describeUnknownKey?.(path, key);
        let hint = custom?.hint;
        if (!custom && key === 'state') {
          hint = '`conditions` replaced `state`: e.g. `conditions: [false]` switches a kapp off';
        } else if (!custom) {
          hint = didYouMean(key, allowedKeysAt(schema, path));
        }
        const message = custom?.message ?? `unknown field \`${key}\``;
        const extra = { path: formatPath([...base, ...path, key]), ...(hint ? { hint } : {}) };
        out.push(options.unknownKeys === 'error' ? errorDiag(message, loc, extra) : warningDiag(message, loc, extra));
      }
      continue;
    }
    const fullPath = formatPath([...base, ...path]);
    if (!at || (at.kind === 'scalar' && at.value === null && issue.code === 'invalid_type')) {
      const parent = node ? nodeAt(node, path.slice(0, -1)) : undefined;
      const name = path[path.length - 1];
      const message =
        typeof name === 'string' ? `missing required field \`${name}\`` : `${issue.message}, got nothing (null)`;
      out.push(errorDiag(message, at?.loc ?? parent?.loc ?? fileLoc, { path: fullPath }));
      continue;
    }
    let expected = issue.message;
    if (expected.startsWith('Invalid input') && issue.code === 'invalid_type') {
      expected = `expected ${ZOD_TYPE_WORDS[issue.expected] ?? issue.expected}`;
    }
    const hint = hintFor(path, at);
    out.push(errorDiag(`${expected}, got ${nodeKindName(at)}`, at.loc, { path: fullPath, ...(hint ? { hint } : {}) }));
  }
  return out;
}

/** Sort diagnostics by position (stable for equal positions). */
export function sortByLocation(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort((a, b) => {
    const la = a.location;
    const lb = b.location;
    if (!la || !lb) return la ? -1 : lb ? 1 : 0;
    if (la.file !== lb.file) return la.file < lb.file ? -1 : 1;
    return la.line - lb.line || la.column - lb.column;
  });
}
