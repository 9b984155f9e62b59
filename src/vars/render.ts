/**
 * Rendering of variables and descriptors. Sugarkube rendered the variable map by serialising it to YAML, rendering
 * that text as one template and parsing it back, up to 20 times; kapps renders string leaves structurally, with the
 * same fixed point for strings (a leaf's rendered text is rendered again on the next pass, exactly like the text
 * round trip), keeps non-string values typed, never re-renders outputs, and reports a variable that does not
 * converge instead of silently truncating it.
 */
import { copyLocations, locationOf } from '../config/locations.js';
import { ConfigError } from '../diagnostics/errors.js';
import { error as diagnosticError, type Diagnostic, type SourceLocation } from '../diagnostics/diagnostic.js';
import { TemplateError } from '../template/errors.js';
import { isTemplate, renderTemplate } from '../template/index.js';
import { GoIfaceMap, isGoMap, newGoMap, type GoMap, type GoValue } from '../go-value/value.js';

/** Passes after which a still-changing variable is an error (Sugarkube stopped silently after 20). */
export const MAX_PASSES = 20;

interface Leaf {
  readonly container: GoMap | GoValue[];
  readonly key: string | number;
  readonly path: string;
  /** The keys from the top of the map to the leaf. */
  readonly keys: readonly (string | number)[];
  /** Its text as the map gave it (before any pass). */
  readonly written: string;
}

/**
 * Containers known to hold no template string anywhere below them. Configuration values are never modified once
 * loaded, so the answer stays true; caching it lets 10,000 kapps share provider vars without re-walking them.
 */
const templateFree = new WeakSet<object>();

/** Whether a template string occurs anywhere inside `value` (iface maps, which only hold data, are not searched). */
function hasTemplates(value: GoValue): boolean {
  if (typeof value === 'string') return isTemplate(value);
  if (value === null || typeof value !== 'object' || value instanceof GoIfaceMap) return false;
  if (templateFree.has(value)) return false;
  let found = false;
  if (Array.isArray(value)) {
    for (const item of value) if (hasTemplates(item)) found = true;
  } else if (isGoMap(value)) {
    for (const k in value) if (hasTemplates(value[k] as GoValue)) found = true;
  }
  if (!found) templateFree.add(value);
  return found;
}

/**
 * Copy the maps and lists that contain template strings (so rendering can write leaves in place) and collect those
 * leaves; containers without templates, and the paths in `skip`, are shared with the input as they are.
 */
function cloneWithLeaves(
  value: GoValue,
  path: string,
  keys: readonly (string | number)[],
  skip: ReadonlySet<string>,
  out: Leaf[],
): GoValue {
  if (Array.isArray(value)) {
    if (!hasTemplates(value)) return value;
    const list = value.slice();
    list.forEach((item, i) => {
      if (typeof item === 'string') {
        if (isTemplate(item))
          out.push({ container: list, key: i, path: `${path}[${i}]`, keys: [...keys, i], written: item });
      } else list[i] = cloneWithLeaves(item, `${path}[${i}]`, [...keys, i], skip, out);
    });
    return list;
  }
  if (!isGoMap(value) || value instanceof GoIfaceMap || templateFree.has(value)) return value;
  let copy: GoMap | undefined;
  let skipped = false;
  for (const key in value) {
    const p = path ? `${path}.${key}` : key;
    if (skip.has(p)) {
      skipped = true;
      continue;
    }
    const item = value[key] as GoValue;
    if (typeof item === 'string') {
      if (!isTemplate(item)) continue;
      copy ??= copyMap(value);
      out.push({ container: copy, key, path: p, keys: [...keys, key], written: item });
    } else if (item !== null && typeof item === 'object') {
      const cloned = cloneWithLeaves(item, p, [...keys, key], skip, out);
      if (cloned !== item) {
        copy ??= copyMap(value);
        copy[key] = cloned;
      }
    }
  }
  if (!copy) {
    if (!skipped) templateFree.add(value);
    return value;
  }
  return copy;
}

function copyMap(m: GoMap): GoMap {
  const out = newGoMap();
  for (const k in m) out[k] = m[k] as GoValue;
  return out;
}

function read(leaf: Leaf): string {
  return (leaf.container as Record<string | number, GoValue>)[leaf.key] as string;
}

function write(leaf: Leaf, value: string): void {
  (leaf.container as Record<string | number, GoValue>)[leaf.key] = value;
}

export interface RenderContext {
  /** What is being rendered, for messages: `kapp web:app`, `stack dev`. */
  readonly subject: string;
  /** Where the stack (or kapp) is defined, for diagnostics. */
  readonly location?: SourceLocation;
  /**
   * Where a variable is written (`keys` from the top of the variable map; `text` is its template as the map held it),
   * with its field path in that file when known: the place a variable that cannot be rendered is reported at.
   */
  readonly locateVariable?: (keys: readonly (string | number)[], text: string) => VariableSite | undefined;
  /** Go's missingkey=error. */
  readonly strict?: boolean;
  /**
   * Planning without a run: outputs are placeholders (empty maps), so a template that reads an output and fails
   * (e.g. `{{ .outputs.db.token | trim }}` on the placeholder) renders `<no value>` instead of failing: its value is
   * only known when the run has produced the output.
   */
  readonly planOnly?: boolean;
}

/**
 * The text a failed render stands for in plan mode (see `RenderContext.planOnly`), or undefined to fail. Only an
 * execution error waits for the outputs: a template that does not parse is wrong whatever the outputs hold.
 */
function planFallback(ctx: RenderContext, text: string, error: unknown): string | undefined {
  if (error instanceof TemplateError && error.phase === 'parse') return undefined;
  return ctx.planOnly && /\.outputs\b/.test(text) ? '<no value>' : undefined;
}

/** Where a variable is written: see `RenderContext.locateVariable`. */
export interface VariableSite {
  readonly location: SourceLocation;
  /** The field path inside the file, e.g. `dev.vars.region`. */
  readonly path?: string;
}

/**
 * A variable that cannot be rendered: reported where it is written when that is known (with the place of what was
 * being rendered as related information), else at the place of what was being rendered.
 */
function variableError(ctx: RenderContext, leaf: Leaf, e: unknown): ConfigError {
  const site = ctx.locateVariable?.(leaf.keys, leaf.written);
  if (!site) return renderError(ctx, `variable ${leaf.path}`, e);
  return renderError(ctx, `variable ${leaf.path}`, e, site.location, {
    ...(site.path !== undefined ? { path: site.path } : {}),
    ...(ctx.location ? { related: [{ message: `${ctx.subject} is defined here`, location: ctx.location }] } : {}),
  });
}

function renderError(
  ctx: RenderContext,
  what: string,
  e: unknown,
  at?: SourceLocation,
  extra?: Pick<Diagnostic, 'path' | 'related'>,
): ConfigError {
  const detail = e instanceof TemplateError || e instanceof Error ? e.message : String(e);
  return new ConfigError([
    diagnosticError(`${ctx.subject}: cannot render ${what}: ${detail}`, at ?? ctx.location, extra),
  ]);
}

function notConverging(ctx: RenderContext, active: readonly Leaf[]): ConfigError {
  const names = active.map((l) => l.path);
  const last = names.pop() ?? '';
  const message =
    names.length === 0
      ? `variable ${last} still changes after ${MAX_PASSES} rendering passes: it refers to itself, directly or through other variables`
      : `variables ${names.join(', ')} and ${last} still change after ${MAX_PASSES} rendering passes: they refer to themselves, directly or through other variables`;
  // Reported where the first of them is written, the others (a few) and the kapp as related places.
  const sites = active
    .slice(0, MAX_RELATED + 1)
    .map((leaf) => ({ leaf, site: ctx.locateVariable?.(leaf.keys, leaf.written) }));
  const first = sites.find((s) => s.site !== undefined);
  if (!first?.site) return new ConfigError([diagnosticError(`${ctx.subject}: ${message}`, ctx.location)]);
  const related = [
    ...sites.flatMap(({ leaf, site }) =>
      site && leaf !== first.leaf ? [{ message: `${leaf.path} is written here`, location: site.location }] : [],
    ),
    ...(ctx.location ? [{ message: `${ctx.subject} is defined here`, location: ctx.location }] : []),
  ];
  return new ConfigError([
    diagnosticError(`${ctx.subject}: ${message}`, first.site.location, {
      ...(first.site.path !== undefined ? { path: first.site.path } : {}),
      related,
    }),
  ]);
}

/** How many other variables a report of variables that never stop changing points at. */
const MAX_RELATED = 5;

/**
 * Render every template string of a variable map to a fixed point. Paths in `skip` (dotted, e.g. `outputs`) are
 * data and are not rendered. Returns a new map; the input is not modified.
 */
export function renderVariables(
  vars: GoMap,
  ctx: RenderContext,
  skip: ReadonlySet<string> = new Set(['outputs']),
): GoMap {
  let active: Leaf[] = [];
  let map = cloneWithLeaves(vars, '', [], skip, active) as GoMap;
  // The top level is always a copy: callers may add to it.
  if (map === vars) map = copyMap(vars);
  const options = { name: 'vars', strict: ctx.strict ?? false };
  for (let pass = 1; active.length > 0; pass++) {
    if (pass > MAX_PASSES) throw notConverging(ctx, active);
    const rendered = active.map((leaf) => {
      try {
        return renderTemplate(read(leaf), map, options);
      } catch (e) {
        const fallback = planFallback(ctx, read(leaf), e);
        if (fallback !== undefined) return fallback;
        throw variableError(ctx, leaf, e);
      }
    });
    const next: Leaf[] = [];
    active.forEach((leaf, i) => {
      const value = rendered[i] as string;
      if (value !== read(leaf)) {
        write(leaf, value);
        if (isTemplate(value)) next.push(leaf);
      }
    });
    active = next;
  }
  return map;
}

/** Answers of `containsTemplate` for configuration objects, which are never modified once loaded. */
const containsCache = new WeakMap<object, boolean>();

/** Whether a configuration value (a string, or a descriptor part, list or map) holds a template string anywhere. */
export function containsTemplate(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return typeof v === 'string' && isTemplate(v);
  let found = containsCache.get(v);
  if (found === undefined) {
    found = objectHasTemplates(v);
    containsCache.set(v, found);
  }
  return found;
}

function objectHasTemplates(v: object): boolean {
  // Serialising is native and much faster than walking the objects; a `{{` in a key only costs a needless render.
  // Values JSON cannot hold (bigints, iface maps) fall back to the walk.
  try {
    return JSON.stringify(v).includes('{{');
  } catch {
    return walkForTemplates(v);
  }
}

function walkForTemplates(v: unknown): boolean {
  if (typeof v === 'string') return isTemplate(v);
  if (v === null || typeof v !== 'object' || v instanceof Map) return false;
  if (Array.isArray(v)) {
    for (const item of v) if (walkForTemplates(item)) return true;
    return false;
  }
  for (const k in v) if (walkForTemplates((v as Record<string, unknown>)[k])) return true;
  return false;
}

/** Where a copy made by `renderOnce(…, { origins: true })` came from. */
const ORIGIN = Symbol('rendered from');

/** The configuration object `obj` was rendered from (`renderOnce` with `origins`), or `obj` itself. */
export function originOf<T extends object>(obj: T): T {
  return (obj as { [ORIGIN]?: T })[ORIGIN] ?? obj;
}

/** `locationOf` that sees through copies made by `renderOnce(…, { origins: true })`. */
export function locateRendered(obj: object | undefined, key?: string | number): SourceLocation | undefined {
  return locationOf(obj === undefined ? undefined : originOf(obj), key);
}

/** Options of `renderOnce`. */
export interface RenderOnceOptions {
  /**
   * Link each copy to the object it was rendered from (read back with `originOf`/`locateRendered`) instead of
   * copying its recorded locations: much cheaper for the many small objects of run units.
   */
  readonly origins?: boolean;
}

/**
 * Render every string of a structure once (a descriptor or one of its parts). Objects and lists in which something
 * rendered are copied with their recorded locations (or linked to their origin, see `RenderOnceOptions`); the
 * others are returned as they are (shared, so treat the result as read-only). Strings without `{{` are kept as they
 * are.
 */
function isNamed(v: unknown): v is { name: string } {
  return typeof v === 'object' && v !== null && typeof (v as { name?: unknown }).name === 'string';
}

export function renderOnce<T>(value: T, data: GoValue, ctx: RenderContext, path = '', opts: RenderOnceOptions = {}): T {
  const keep = (from: object, to: object): void => {
    if (!opts.origins) copyLocations(from, to);
    else Object.defineProperty(to, ORIGIN, { value: originOf(from) });
  };
  const options = { name: 'kapp', strict: ctx.strict ?? false };
  // `at`: where the value is written (the field's own line, when the loader recorded it).
  const visit = (v: unknown, p: string, at?: SourceLocation): unknown => {
    if (typeof v === 'string') {
      if (!isTemplate(v)) return v;
      try {
        return renderTemplate(v, data, options);
      } catch (e) {
        const fallback = planFallback(ctx, v, e);
        if (fallback !== undefined) return fallback;
        throw renderError(ctx, p || 'value', e, at);
      }
    }
    if (v === null || typeof v !== 'object' || v instanceof Map) return v;
    if (Array.isArray(v)) {
      let list: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        // A named item (a run unit) is named by its name, as it is written: `run_units.main`, not `run_units[0]`.
        const name = p.endsWith('run_units') && isNamed(item) ? `.${item.name}` : `[${i}]`;
        const rendered = visit(item, `${p}${name}`, locationOf(v, i) ?? at);
        if (rendered !== item) {
          list ??= v.slice();
          list[i] = rendered;
        }
      }
      if (!list) return v;
      keep(v, list);
      return list;
    }
    let out: Record<string, unknown> | undefined;
    for (const k in v) {
      const item = (v as Record<string, unknown>)[k];
      const rendered = visit(item, p ? `${p}.${k}` : k, locationOf(v, k) ?? at);
      if (rendered !== item) {
        if (!out) {
          const proto = Object.getPrototypeOf(v) as object | null;
          out = Object.assign(proto === null ? Object.create(null) : {}, v) as Record<string, unknown>;
        }
        out[k] = rendered;
      }
    }
    if (!out) return v;
    keep(v, out);
    return out;
  };
  return visit(value, path) as T;
}
