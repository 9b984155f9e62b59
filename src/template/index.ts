/**
 * Public API of the template engine: Go text/template (Go 1.19 behaviour) with sprig and Sugarkube's functions.
 *
 * ```ts
 * renderTemplate('{{ .stack.name | upper }}', data);            // parse (cached) + execute
 * const t = parseTemplate(text); t.execute(data, { strict: true });
 * if (isTemplate(s)) ...                                          // skip the engine for plain strings
 * ```
 * Every failure is a `TemplateError` with Go's exact message.
 */
import { builtins } from './builtins.js';
import { TemplateError } from './errors.js';
import { executeTemplate, lineAndByteColumn } from './exec.js';
import { defaultFuncs } from './funcs/index.js';
import type { TreeSet } from './parser.js';
import { ParseFailure, parseTrees } from './parser.js';
import { currentRenderContext } from './scope.js';
import type { FuncContext, FuncMap } from './types.js';
import type { GoValue } from '../go-value/value.js';

export { TemplateError } from './errors.js';

/** Options of parsing and rendering. */
export interface RenderOptions {
  /** Template name used in error texts (default `gotpl`, as Sugarkube). */
  name?: string;
  /** missingkey=error: a missing map key is an error instead of `<no value>`. */
  strict?: boolean;
  /** Function map (default: sprig + Sugarkube's functions). Entries override builtins of the same name. */
  funcs?: FuncMap;
  /**
   * What functions may read from outside (default: the context of the run that renders, see `scope.ts`; outside
   * any run, this process's environment and working directory).
   */
  ctx?: FuncContext;
}

/** A parsed template, ready to execute many times. */
export interface ParsedTemplate {
  /** The template name. */
  readonly name: string;
  /** The template text. */
  readonly text: string;
  /** Execute against data; `options.strict`, `funcs` and `ctx` default to the ones given at parse time. */
  execute(data: GoValue, options?: RenderOptions): string;
}

const DEFAULT_NAME = 'gotpl';
const CACHE_LIMIT = 20_000;

/** The context of a render outside any run (`kapps render`): this process's environment and working directory. */
export const processEnvContext: FuncContext = {
  getEnv: (name) => process.env[name],
  get cwd() {
    return process.cwd();
  },
};

export { withRenderContext, currentRenderContext } from './scope.js';

let defaultFuncMap: FuncMap | undefined;

function funcsOf(options?: RenderOptions): FuncMap {
  if (options?.funcs) return options.funcs;
  defaultFuncMap ??= defaultFuncs();
  return defaultFuncMap;
}

class Parsed implements ParsedTemplate {
  constructor(
    readonly name: string,
    readonly text: string,
    private readonly trees: TreeSet,
    private readonly funcs: FuncMap,
    private readonly parseOptions: RenderOptions | undefined,
  ) {}

  execute(data: GoValue, options?: RenderOptions): string {
    return executeTemplate({ text: this.text, name: this.name, trees: this.trees }, data, {
      strict: options?.strict ?? this.parseOptions?.strict ?? false,
      funcs: options?.funcs ?? this.funcs,
      ctx: options?.ctx ?? this.parseOptions?.ctx ?? currentRenderContext() ?? processEnvContext,
    });
  }
}

type CacheEntry = { ok: true; trees: TreeSet } | { ok: false; error: TemplateError };

/** Parse results by function map, then by name + NUL + text. */
const cache = new WeakMap<FuncMap, Map<string, CacheEntry>>();

function parseUncached(text: string, name: string, funcs: FuncMap): CacheEntry {
  try {
    const trees = parseTrees(text, name, (fn) => funcs.has(fn) || builtins.has(fn));
    return { ok: true, trees };
  } catch (e) {
    if (e instanceof ParseFailure) {
      const { col } = lineAndByteColumn(text, Math.min(e.pos, text.length));
      const line = Math.max(e.line, 1);
      return {
        ok: false,
        error: new TemplateError(`template: ${name}:${e.line}: ${e.message}`, 'parse', name, line, col + 1),
      };
    }
    const message = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      error: new TemplateError(`template: ${name}: internal error: ${message}`, 'parse', name, 1, 1),
    };
  }
}

/**
 * Parse a template (Go's template.New(name).Funcs(funcs).Parse(text)). Results are cached by text, name and
 * function-map identity. Throws TemplateError (phase `parse`).
 */
export function parseTemplate(text: string, options?: RenderOptions): ParsedTemplate {
  const name = options?.name ?? DEFAULT_NAME;
  const funcs = funcsOf(options);
  let byKey = cache.get(funcs);
  if (byKey === undefined) {
    byKey = new Map();
    cache.set(funcs, byKey);
  }
  const key = `${name}\u0000${text}`;
  let entry = byKey.get(key);
  if (entry === undefined) {
    entry = parseUncached(text, name, funcs);
    if (byKey.size >= CACHE_LIMIT) byKey.clear();
    byKey.set(key, entry);
  }
  if (!entry.ok) throw entry.error;
  return new Parsed(name, text, entry.trees, funcs, options);
}

/** Parse (cached) and execute a template against data. Throws TemplateError. */
export function renderTemplate(text: string, data: GoValue, options?: RenderOptions): string {
  return parseTemplate(text, options).execute(data, options);
}

/** Whether a string contains an action delimiter at all (strings without `{{` render to themselves). */
export function isTemplate(text: string): boolean {
  return text.includes('{{');
}
