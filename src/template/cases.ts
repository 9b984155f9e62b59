/**
 * Batch rendering of template cases in the conformance format
 * (`{"cases":[{"id","template","data"|"yaml","strict"?,"env"?}]}` → `{"results":[{"id","output"}|{"id","error","phase"}]}`),
 * with the `@FIXTURES@` substitutions: the token is replaced by the fixtures directory in templates, data strings and
 * YAML text, and that directory is turned back into the token in outputs and errors.
 */
import { TemplateError } from './errors.js';
import { parseTemplate } from './index.js';
import type { FuncContext, FuncMap } from './types.js';
import type { GoValue } from '../go-value/value.js';
import { GoIfaceMap, isGoMap, newGoMap } from '../go-value/value.js';

/** The token standing for the fixtures directory. */
export const FIXTURES_TOKEN = '@FIXTURES@';

/** One result: an output or an error with its phase. */
export type CaseResult =
  | { readonly id: string; readonly output: string }
  | { readonly id: string; readonly error: string; readonly phase: 'parse' | 'exec' | 'data' };

/** How to run a batch. */
export interface RunCasesOptions {
  /** Absolute fixtures directory substituted for `@FIXTURES@` (no substitution when absent). */
  readonly fixturesDir?: string;
  /** Function map (default: the engine's default map). */
  readonly funcs?: FuncMap;
  /** Environment lookup outside a case's own `env`. */
  readonly getEnv: (name: string) => string | undefined;
  /** Decode a case's YAML text as yaml.v2 decodes Sugarkube vars (top-level string map, nested iface maps). */
  readonly decodeYaml: (text: string) => GoValue;
  /** Default for cases without their own `strict`. */
  readonly strict?: boolean;
}

function mapStrings(v: GoValue, fix: (s: string) => string): GoValue {
  if (typeof v === 'string') return fix(v);
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, fix));
  if (v instanceof GoIfaceMap) {
    const m = new GoIfaceMap();
    for (const [k, x] of v) m.set(typeof k === 'string' ? fix(k) : k, mapStrings(x, fix));
    return m;
  }
  if (isGoMap(v)) {
    const m = newGoMap();
    for (const k of Object.keys(v)) m[fix(k)] = mapStrings(v[k] ?? null, fix);
    return m;
  }
  return v;
}

function field(c: GoValue, name: string): GoValue | undefined {
  if (!isGoMap(c) || !Object.prototype.hasOwnProperty.call(c, name)) return undefined;
  return c[name];
}

/** Run every case of a parsed case document (`{"cases":[...]}`) and return the results in order. */
export function runCases(doc: GoValue, options: RunCasesOptions): CaseResult[] {
  const cases = field(doc, 'cases');
  if (!Array.isArray(cases)) throw new Error('the case file has no "cases" list');
  const dir = options.fixturesDir;
  const fix = dir ? (s: string) => s.replaceAll(FIXTURES_TOKEN, dir) : (s: string) => s;
  const unfix = dir ? (s: string) => s.replaceAll(dir, FIXTURES_TOKEN) : (s: string) => s;
  return cases.map((c): CaseResult => {
    const idField = field(c, 'id');
    const id = typeof idField === 'string' ? idField : '';
    const template = field(c, 'template');
    const yaml = field(c, 'yaml');
    const strictField = field(c, 'strict');
    const envField = field(c, 'env');
    const env = new Map<string, string>();
    if (isGoMap(envField)) {
      for (const [k, v] of Object.entries(envField)) if (typeof v === 'string') env.set(k, fix(v));
    }
    const ctx: FuncContext = { getEnv: (name) => (env.has(name) ? env.get(name) : options.getEnv(name)) };
    let data: GoValue;
    try {
      if (typeof yaml === 'string') data = options.decodeYaml(fix(yaml));
      else data = mapStrings(field(c, 'data') ?? null, fix);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      return { id, error: unfix(`bad yaml data: ${message}`), phase: 'data' };
    }
    const strict = typeof strictField === 'boolean' ? strictField : (options.strict ?? false);
    try {
      const text = fix(typeof template === 'string' ? template : '');
      const parsed = parseTemplate(text, { funcs: options.funcs, ctx, strict });
      return { id, output: unfix(parsed.execute(data, { strict, ctx })) };
    } catch (e) {
      if (e instanceof TemplateError) return { id, error: unfix(e.message), phase: e.phase };
      throw e;
    }
  });
}

function jsonString(s: string): string {
  return JSON.stringify(s)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Format results as the conformance files do: one result per line. */
export function formatResults(results: readonly CaseResult[]): string {
  const lines = results.map((r) =>
    'output' in r
      ? `{"id": ${jsonString(r.id)}, "output": ${jsonString(r.output)}}`
      : `{"id": ${jsonString(r.id)}, "error": ${jsonString(r.error)}, "phase": ${jsonString(r.phase)}}`,
  );
  return `{"results":[\n${lines.join(',\n')}\n]}\n`;
}
