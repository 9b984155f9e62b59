/**
 * Rendering of variables and descriptors. Sugarkube rendered the variable map by serialising it to YAML, rendering
 * that text as one template and parsing it back, up to 20 times; kapps renders string leaves structurally, with the
 * same fixed point for strings (a leaf's rendered text is rendered again on the next pass, exactly like the text
 * round trip), keeps non-string values typed, never re-renders outputs, and reports a variable that does not
 * converge instead of silently truncating it.
 */
import { copyLocations } from '../config/locations.js';
import { ConfigError } from '../diagnostics/errors.js';
import { error as diagnosticError, type SourceLocation } from '../diagnostics/diagnostic.js';
import { TemplateError } from '../template/errors.js';
import { isTemplate, renderTemplate } from '../template/index.js';
import { GoIfaceMap, isGoMap, newGoMap, type GoMap, type GoValue } from '../template/value.js';

/** Passes after which a still-changing variable is an error (Sugarkube stopped silently after 20). */
export const MAX_PASSES = 20;

interface Leaf {
  readonly container: GoMap | GoValue[];
  readonly key: string | number;
  readonly path: string;
}

function collectLeaves(value: GoValue, path: string, skip: ReadonlySet<string>, out: Leaf[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      if (typeof item === 'string') {
        if (isTemplate(item)) out.push({ container: value, key: i, path: `${path}[${i}]` });
      } else collectLeaves(item, `${path}[${i}]`, skip, out);
    });
  } else if (isGoMap(value)) {
    for (const key in value) {
      const p = path ? `${path}.${key}` : key;
      if (skip.has(p)) continue;
      const item = value[key] as GoValue;
      if (typeof item === 'string') {
        if (isTemplate(item)) out.push({ container: value, key, path: p });
      } else collectLeaves(item, p, skip, out);
    }
  }
}

/** Copy maps and lists (not scalars) so rendering can write leaves in place. */
function cloneContainers(value: GoValue): GoValue {
  if (Array.isArray(value)) return value.map(cloneContainers);
  if (value instanceof GoIfaceMap) return value;
  if (isGoMap(value)) {
    const m = newGoMap();
    for (const k in value) m[k] = cloneContainers(value[k] as GoValue);
    return m;
  }
  return value;
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
  /** Go's missingkey=error. */
  readonly strict?: boolean;
}

function renderError(ctx: RenderContext, what: string, e: unknown): ConfigError {
  const detail = e instanceof TemplateError || e instanceof Error ? e.message : String(e);
  return new ConfigError([diagnosticError(`${ctx.subject}: cannot render ${what}: ${detail}`, ctx.location)]);
}

/**
 * Render every template string of a variable map to a fixed point. Paths in `skip` (dotted, e.g. `outputs`) are
 * data and are not rendered. Returns a new map; the input is not modified.
 */
export function renderVariables(vars: GoMap, ctx: RenderContext, skip: ReadonlySet<string> = new Set(['outputs'])): GoMap {
  const map = cloneContainers(vars) as GoMap;
  let active: Leaf[] = [];
  collectLeaves(map, '', skip, active);
  const options = { name: 'vars', strict: ctx.strict ?? false };
  for (let pass = 1; active.length > 0; pass++) {
    if (pass > MAX_PASSES) {
      const names = active.map((l) => l.path).join(', ');
      throw new ConfigError([
        diagnosticError(
          `${ctx.subject}: variable ${names} still changes after ${MAX_PASSES} rendering passes (it refers to itself, directly or through other variables)`,
          ctx.location,
        ),
      ]);
    }
    const rendered = active.map((leaf) => {
      try {
        return renderTemplate(read(leaf), map, options);
      } catch (e) {
        throw renderError(ctx, `variable ${leaf.path}`, e);
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

/**
 * Render every string of a structure once (a descriptor or one of its parts), returning a rendered copy; objects
 * are copied with their recorded locations. Strings without `{{` are kept as they are.
 */
export function renderOnce<T>(value: T, data: GoValue, ctx: RenderContext, path = ''): T {
  const options = { name: 'kapp', strict: ctx.strict ?? false };
  const visit = (v: unknown, p: string): unknown => {
    if (typeof v === 'string') {
      if (!isTemplate(v)) return v;
      try {
        return renderTemplate(v, data, options);
      } catch (e) {
        throw renderError(ctx, p || 'value', e);
      }
    }
    if (Array.isArray(v)) {
      const list = v.map((item, i) => visit(item, `${p}[${i}]`));
      copyLocations(v, list);
      return list;
    }
    if (v instanceof Map || v === null || typeof v !== 'object') return v;
    const proto = Object.getPrototypeOf(v) as object | null;
    const out = (proto === null ? Object.create(null) : {}) as Record<string, unknown>;
    for (const [k, item] of Object.entries(v)) out[k] = visit(item, p ? `${p}.${k}` : k);
    copyLocations(v, out);
    return out;
  };
  return visit(value, path) as T;
}
