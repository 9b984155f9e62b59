/**
 * Sugarkube's own template functions: `exists`, `findFiles`, `mapPrintF`, `listString`, `removeEmpty`, `isSet`.
 * `exists` and `findFiles` read the file system (synchronously: templates render synchronously), relative to the
 * render context's directory and, when the context names readable directories (a run of the runs server), only
 * inside them.
 */
import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { formatValue, sprintf } from '../fmt.js';
import { FuncError, type FuncContext } from '../types.js';
import type { GoValue } from '../../go-value/value.js';
import { GoIfaceMap, goTypeName } from '../../go-value/value.js';
import { ANY, def, type FuncTable, str, stringList, variadic } from './define.js';
import { cleanPath, isAbsPath, joinPath } from './go-path.js';
import { quoteGo } from '../fmt.js';
import { compareGoStrings } from './go-string.js';
import { compileRegexp, type GoRegexp } from './regexp.js';
import { RegexpSyntaxError } from './regexp-syntax.js';

const S = 'string';

/** Go's texts for the errno codes a stat or directory read can meet. */
const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
  EIO: 'input/output error',
  // Node refuses paths with a NUL byte before asking the system, which answers EINVAL in Go.
  ERR_INVALID_ARG_VALUE: 'invalid argument',
  ERR_INVALID_ARG_TYPE: 'invalid argument',
};

function errnoCode(e: unknown): string {
  return typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : '';
}

/** A Go *PathError text: `lstat /x: no such file or directory`. */
function pathError(op: string, path: string, e: unknown): string {
  const code = errnoCode(e);
  return `${op} ${path}: ${ERRNO_TEXT[code] ?? (e instanceof Error ? e.message : String(e))}`;
}

/** The items of a []interface{} or []string (Go's type switch); anything else is not a list here. */
function plainList(v: GoValue): GoValue[] | null {
  if (!Array.isArray(v)) return null;
  const t = goTypeName(v);
  return t === '[]interface {}' || t === '[]string' ? v : null;
}

/** The directory relative paths start from. */
function cwdOf(ctx: FuncContext): string {
  return ctx.cwd ?? process.cwd();
}

/** The real path of `p` (absolute): its nearest existing ancestor's real path joined with the rest. */
function realOrNearest(p: string): string {
  const rest: string[] = [];
  for (let at = p; ;) {
    try {
      return joinPath(realpathSync(at), ...rest.reverse());
    } catch {
      const parent = dirPathOf(at);
      if (parent === at) return p;
      rest.push(at.slice(parent === '/' ? 1 : parent.length + 1));
      at = parent;
    }
  }
}

function dirPathOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

/** Check that a function may read `path` (as given): inside the context's readable directories, links resolved. */
function checkReadable(fn: string, path: string, ctx: FuncContext): void {
  const roots = ctx.readRoots;
  if (roots === undefined) return;
  const real = realOrNearest(absPath(path, cwdOf(ctx)));
  if (roots.some((r) => real === r || real.startsWith(r === '/' ? r : `${r}/`))) return;
  throw new FuncError(`${fn}: ${quoteGo(path)} is outside the project and its workspace, where this run may read`);
}

/**
 * Whether `path` (absolute) names an entry right inside a directory of the run's own `PATH`: the run may start any
 * command there, so asking whether one is there (`exists "f" "/usr/bin/terraform"`) tells it nothing more.
 */
function onRunPath(path: string, ctx: FuncContext): boolean {
  const dirs = (ctx.getEnv('PATH') ?? '').split(':').filter((d) => d.startsWith('/'));
  const parent = dirPathOf(path);
  return dirs.some((d) => (d.length > 1 && d.endsWith('/') ? d.slice(0, -1) : d) === parent);
}

/**
 * `exists TYPE PATH`: "f" regular file, "d" directory, "any" anything; a missing path is false. A confined run may
 * also ask about the commands of its `PATH` (see `onRunPath`).
 */
function exists(kind: string, given: string, ctx: FuncContext): boolean {
  const path = absPath(given, cwdOf(ctx));
  if (!onRunPath(path, ctx)) checkReadable('exists', given, ctx);
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return false;
    throw new FuncError(pathError('stat', given, e));
  }
  switch (kind) {
    case 'f':
      return st.isFile();
    case 'd':
      return st.isDirectory();
    case 'any':
      return true;
    default:
      throw new FuncError(`unknown file type ${quoteGo(kind)} for exists: use "f", "d" or "any"`);
  }
}

/**
 * filepath.Walk from `root`, calling `visit` for every path in lexical order per directory; symbolic links are
 * reported with `isLink` and not followed. Paths are reported as Go reports them (below `root` as given); the file
 * system is asked about `at(path)` (relative paths joined to the render context's directory). Errors are Go's
 * *PathError texts.
 */
function walk(root: string, visit: (path: string) => void, at: (path: string) => string): void {
  let st;
  try {
    st = lstatSync(at(root));
  } catch (e) {
    throw new Error(pathError('lstat', root, e), { cause: e });
  }
  walkEntry(root, st.isSymbolicLink(), st.isDirectory(), visit, at);
}

function walkEntry(
  path: string,
  isLink: boolean,
  isDir: boolean,
  visit: (path: string) => void,
  at: (path: string) => string,
): void {
  if (isLink) return;
  visit(path);
  if (!isDir) return;
  let names: string[];
  try {
    names = readdirSync(at(path));
  } catch (e) {
    throw new Error(pathError('open', path, e), { cause: e });
  }
  names.sort(compareGoStrings);
  for (const name of names) {
    const child = joinPath(path, name);
    let st;
    try {
      st = lstatSync(at(child));
    } catch (e) {
      throw new Error(pathError('lstat', child, e), { cause: e });
    }
    walkEntry(child, st.isSymbolicLink(), st.isDirectory(), visit, at);
  }
}

/** filepath.Abs: clean an absolute path, or join a relative one to the working directory. */
function absPath(p: string, cwd: string): string {
  return isAbsPath(p) ? cleanPath(p) : joinPath(cwd, p);
}

/**
 * `findFiles ROOT PATTERNS`: for each pattern in order, every walked path (files and directories, symlinks
 * skipped) whose full path contains a non-empty match, made absolute. A missing root is an error (only when
 * there is a pattern to look for).
 */
function findFiles(given: string, patterns: readonly string[], ctx: FuncContext): string[] {
  const out: string[] = [];
  if (patterns.length > 0) checkReadable('findFiles', given, ctx);
  const cwd = cwdOf(ctx);
  const root = given;
  const at = (p: string): string => absPath(p, cwd);
  for (const p of patterns) {
    let re: GoRegexp;
    try {
      re = compileRegexp(p);
    } catch (e) {
      if (e instanceof RegexpSyntaxError) throw new FuncError(`invalid pattern ${quoteGo(p)}: ${e.message}`);
      throw e;
    }
    const found: string[] = [];
    try {
      walk(
        root,
        (path) => {
          if (re.findString(path) !== '') found.push(path);
        },
        at,
      );
    } catch (e) {
      throw new FuncError(`error finding ${quoteGo(p)} in ${quoteGo(root)}: ${(e as Error).message}`);
    }
    for (const f of found) out.push(at(f));
  }
  return out;
}

/** Sugarkube's custom functions by name. */
export function sugarkubeFuncs(): FuncTable {
  return {
    exists: def([S, S], (a, ctx) => exists(str(a, 0), str(a, 1), ctx)),
    findFiles: def([S, '[]string'], (a, ctx) => {
      const patterns = a[1];
      return stringList(findFiles(str(a, 0), Array.isArray(patterns) ? patterns.map(String) : [], ctx));
    }),
    mapPrintF: def([S, ANY], (a) => {
      const items = plainList(a[1] ?? null) ?? [];
      return stringList(items.map((it) => sprintf(str(a, 0), [it])));
    }),
    listString: variadic([], S, (a) => stringList(a.map(String))),
    removeEmpty: def([ANY], (a) => {
      const items = plainList(a[0] ?? null) ?? [];
      return stringList(items.filter((it) => it !== null && it !== '').map((it) => formatValue(it)));
    }),
    isSet: def(['map[interface {}]interface {}', S], (a) => {
      const m = a[0];
      return m instanceof GoIfaceMap && m.has(str(a, 1));
    }),
  };
}
