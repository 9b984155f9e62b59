/**
 * The complete spec of a kapp (format 2): its steps and dependencies with the sources, templates and variables it
 * is made from, every path of the machine made relative to a root (`${kapp_dir}`, `${workspace}`, `${stack_dir}`)
 * and every secret replaced by a keyed mask. Pure: what was read from the workspace (digests, commits, rendered
 * templates) comes in as `KappInputs`, and the keyed digest as a function.
 */
import type { Phase } from '../vocabulary.js';
import { PHASES } from '../vocabulary.js';
import { isSecretFlag, isSecretName, URL_PASSWORD_ANYWHERE } from './secrets.js';
import {
  SPEC_FORMAT,
  type SpecKapp,
  type SpecSource,
  type SpecStep,
  type SpecTemplate,
  type StackSpec,
} from './spec.js';

/** A source as read from the workspace (absolute paths, unkeyed digests). */
export interface SourceInput {
  id: string;
  kind: 'git' | 'file';
  uri: string;
  ref?: string;
  commit?: string | null;
  /** sha256 of the source's file tree (or git's tree id); null when it could not be read. */
  tree?: string | null;
}

/** A template as rendered for the spec. */
export interface TemplateInput {
  id: string;
  source: string;
  /** Absolute. */
  dest: string;
  sensitive: boolean;
  /** The rendered content; null when it cannot be rendered before the run. */
  content: string | null;
}

/** What was read for one kapp. */
export interface KappInputs {
  sources: SourceInput[];
  templates: TemplateInput[];
  /** `.kapp.vars`, as plain data. */
  vars: Record<string, unknown>;
}

/** The absolute directories the spec's paths are made relative to. */
export interface SpecRootDirs {
  kappDir: string;
  workspace: string;
  stackDir: string;
}

/** A keyed digest (hex) of a text; the key never leaves the function. */
export type KeyedDigest = (text: string) => string;

/** Templates longer than this keep only their digest and line count. */
export const MAX_TEMPLATE_LINES = 400;
export const MAX_TEMPLATE_BYTES = 32 * 1024;

/** The complete spec of every kapp of `base` (those without inputs are kept as they are). */
export function completeStackSpec(
  base: StackSpec,
  inputs: ReadonlyMap<string, KappInputs>,
  roots: (id: string) => SpecRootDirs,
  keyed: KeyedDigest,
  knownSecrets: readonly string[] = [],
): StackSpec {
  return {
    stack: base.stack,
    format: SPEC_FORMAT,
    kapps: base.kapps.map((k) => {
      const found = inputs.get(k.id);
      return found ? completeKappSpec(k, found, roots(k.id), keyed, knownSecrets) : k;
    }),
  };
}

/** One kapp's complete spec: see the module comment; `knownSecrets` are masked wherever they appear. */
export function completeKappSpec(
  base: SpecKapp,
  inputs: KappInputs,
  roots: SpecRootDirs,
  keyed: KeyedDigest,
  knownSecrets: readonly string[] = [],
): SpecKapp {
  // Secrets known from elsewhere (the environment's secret-looking variables): masked wherever they appear.
  const secrets = new Set<string>(knownSecrets.filter((s) => s.length >= 4));
  const token = (secret: string): string => `(sensitive#${keyed(`secret\u0000${secret}`).slice(0, 24)})`;
  const hide = (secret: string): string => {
    if (secret.length >= 4) secrets.add(secret);
    return token(secret);
  };
  // Secrets found by name or form first (steps, then variables), so that every other text can be scrubbed of them.
  const phases = {} as Record<Phase, SpecStep[]>;
  for (const phase of PHASES) phases[phase] = (base.phases[phase] ?? []).map((s) => maskStep(s, hide));
  const vars = maskVars(inputs.vars, hide) as Record<string, unknown>;
  const ordered = [...secrets].sort((a, b) => b.length - a.length);
  const rootList = rootPairs(roots);
  const clean = (text: string): string => {
    let out = text;
    for (const secret of ordered) if (out.includes(secret)) out = out.split(secret).join(token(secret));
    return portablePath(out, rootList);
  };
  const templates = inputs.templates.map((t): SpecTemplate => {
    const content = t.content;
    const lines = content === null ? [] : splitLines(content);
    const entry: SpecTemplate = {
      id: t.id,
      source: t.source,
      dest: portablePath(t.dest, rootList),
      sensitive: t.sensitive,
      digest: content === null ? null : keyed(`template\u0000${content}`),
      lineCount: lines.length,
    };
    if (
      !t.sensitive &&
      content !== null &&
      lines.length <= MAX_TEMPLATE_LINES &&
      content.length <= MAX_TEMPLATE_BYTES
    ) {
      entry.lines = lines.map(clean);
    }
    return entry;
  });
  const sources = inputs.sources.map((s): SpecSource => {
    const entry: SpecSource = { id: s.id, kind: s.kind, uri: clean(s.uri) };
    if (s.ref !== undefined) entry.ref = s.ref;
    if (s.commit !== undefined) entry.commit = s.commit;
    entry.digest = s.tree ? keyed(`tree\u0000${s.tree}`) : null;
    return entry;
  });
  const kapp: SpecKapp = {
    ...base,
    dependsOn: [...base.dependsOn],
    phases: mapStrings(phases, clean) as Record<Phase, SpecStep[]>,
    sources,
    templates,
    vars: mapStrings(vars, clean) as Record<string, unknown>,
  };
  return kapp;
}

/** A step with its secrets (by name or form) replaced by `hide`. */
function maskStep(step: SpecStep, hide: (secret: string) => string): SpecStep {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(step.env)) {
    env[name] = isSecretName(name) && value !== '' ? hide(value) : maskUrls(value, hide);
  }
  const args = step.args.map((arg, i) => {
    const assign = /^(-{0,2}[^=\s]+)=([\s\S]*)$/.exec(arg);
    const name = assign?.[1];
    if (name !== undefined && isSecretName(name) && (assign?.[2] ?? '') !== '') {
      return `${name}=${hide(assign?.[2] ?? '')}`;
    }
    if (isSecretFlag(step.args[i - 1]) && !arg.startsWith('-')) return hide(arg);
    return maskUrls(arg, hide);
  });
  const out: SpecStep = { ...step, command: maskUrls(step.command, hide), args, env };
  if (step.conditions) out.conditions = step.conditions.map((c) => maskUrls(c, hide));
  return out;
}

/** A text with each URL's password replaced by `hide`. */
function maskUrls(text: string, hide: (secret: string) => string): string {
  return text.replace(URL_PASSWORD_ANYWHERE, (_m, head: string, password: string) =>
    password === '' ? `${head}:@` : `${head}:${hide(password)}@`,
  );
}

/** Variables with the values under secret names (and URL passwords) replaced by `hide`. */
function maskVars(value: unknown, hide: (secret: string) => string): unknown {
  if (typeof value === 'string') return maskUrls(value, hide);
  if (Array.isArray(value)) return value.map((v) => maskVars(v, hide));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      if (isSecretName(key) && member !== null && member !== '' && member !== false) {
        // Every leaf of a secret value is a secret of its own (it may be passed on alone).
        collectLeaves(member, hide);
        out[key] = hide(typeof member === 'string' ? member : JSON.stringify(member));
      } else {
        out[key] = maskVars(member, hide);
      }
    }
    return out;
  }
  return value;
}

function collectLeaves(value: unknown, hide: (secret: string) => string): void {
  if (typeof value === 'string' || typeof value === 'number') hide(String(value));
  else if (Array.isArray(value)) for (const v of value) collectLeaves(v, hide);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) collectLeaves(v, hide);
}

/** Every string of plain data passed through `f` (keys kept). */
function mapStrings(value: unknown, f: (text: string) => string): unknown {
  if (typeof value === 'string') return f(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, f));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) if (member !== undefined) out[key] = mapStrings(member, f);
    return out;
  }
  return value;
}

/** The roots, longest first (a kapp's directory lies inside the workspace, which may lie inside the stack's). */
function rootPairs(roots: SpecRootDirs): [string, string][] {
  const pairs: [string, string][] = [
    [trimSlash(roots.kappDir), '${kapp_dir}'],
    [trimSlash(roots.workspace), '${workspace}'],
    [trimSlash(roots.stackDir), '${stack_dir}'],
  ];
  return pairs.filter(([dir]) => dir.length > 1).sort((a, b) => b[0].length - a[0].length);
}

function trimSlash(dir: string): string {
  return dir.length > 1 ? dir.replace(/\/+$/, '') : dir;
}

/** A text with each root directory (followed by `/` or the end of a path) replaced by its name. */
export function portablePath(text: string, roots: readonly (readonly [string, string])[]): string {
  let out = text;
  for (const [dir, name] of roots) if (out.includes(dir)) out = replaceRoot(out, dir, name);
  return out;
}

/** `text` with each `dir` that ends where a path's part may end replaced by `name` (no pattern built per call). */
function replaceRoot(text: string, dir: string, name: string): string {
  let out = '';
  let from = 0;
  let at = text.indexOf(dir);
  while (at !== -1) {
    const next = text.charCodeAt(at + dir.length);
    if (!Number.isNaN(next) && isPathPart(next)) {
      // Not a whole part here; another occurrence may still start inside this one.
      at = text.indexOf(dir, at + 1);
      continue;
    }
    out += text.slice(from, at) + name;
    from = at + dir.length;
    at = text.indexOf(dir, from);
  }
  return from === 0 ? text : out + text.slice(from);
}

/** A letter, a digit, `.`, `_` or `-`: a character that continues a file name. */
function isPathPart(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    code === 0x2e ||
    code === 0x5f ||
    code === 0x2d
  );
}

/** Lines of a text (a last line without a newline counts; a final newline adds none). */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
