/**
 * Turning a kapp's declared sources into things the workspace can fetch. Besides Sugarkube's forms (a git URI
 * `<repo>//<path>#<ref>`, a `file://` path) kapps accepts a plain path, relative to the manifest that declares the
 * kapp. A git source's ref is `options.branch` when set (from the source, a stack `versions` entry or an override),
 * else its `#ref`.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { locationOf } from '../config/locations.js';
import type { SourceConfig } from '../config/types.js';
import { error as diagnosticError, type Diagnostic, type SourceLocation } from '../diagnostics/diagnostic.js';
import { parseSourceUri, sourceFqId, SourceUriError } from '../config/index.js';
import { NAME_HINT, nameProblem } from '../config/names.js';
import { gitPathProblem, gitRefProblem, gitRepoProblem } from '../config/source-uri.js';
import type { ResolvedSource } from '../workspace/workspace.js';
import { findSubstitution, isUrl, type SourceSubstitution } from '../config/source-substitution.js';

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** A local path that git can fetch from: a working repository or a bare one. */
function isGitRepo(dir: string): boolean {
  return existsSync(path.join(dir, '.git')) || (existsSync(path.join(dir, 'HEAD')) && isDir(path.join(dir, 'objects')));
}

/**
 * Apply a substitution to a git source: a URL replacement gives another git URL (checked like any source URI); a
 * local git repository is fetched from at the source's ref; a plain folder, or a `file://` replacement, is copied
 * (its `<path>` inside it; the ref does not apply).
 */
function substitute(
  sub: SourceSubstitution,
  parsed: { readonly repo: string; readonly path: string },
  ref: string,
): { kind: 'git'; repo: string } | { kind: 'file'; path: string } | string {
  const rest = parsed.repo.slice(sub.prefix.length);
  const from = `(substituted for ${parsed.repo} by ${sub.origin})`;
  if (sub.replace.startsWith('file://') || !isUrl(sub.replace)) {
    const local = sub.replace.startsWith('file://') ? sub.replace.slice('file://'.length) : sub.replace;
    const repo = path.join(local, rest);
    if (!isDir(repo)) return `${repo} does not exist or is not a folder ${from}`;
    if (!sub.replace.startsWith('file://') && isGitRepo(repo)) return { kind: 'git', repo };
    const dir = path.join(repo, parsed.path.replace(/^\/+/, ''));
    if (!existsSync(dir)) return `${dir} does not exist ${from}`;
    return { kind: 'file', path: dir };
  }
  const url = sub.replace + rest;
  // Checked as a source URI is (when it reads as one), so a substituted URL passes the same checks.
  if (!url.includes('.git')) return { kind: 'git', repo: url };
  try {
    const again = parseSourceUri(`${url}//${parsed.path}#${ref}`);
    if (again.kind === 'git') return { kind: 'git', repo: again.repo };
  } catch (e) {
    if (!(e instanceof SourceUriError)) throw e;
    return `${e.message} ${from}`;
  }
  return { kind: 'git', repo: url };
}

/** A git source whose ref is a template, rendered once the kapp's variables are known (see `renderSourceRefs`). */
export interface TemplatedRef {
  /** Index of the source in the resolved list. */
  readonly index: number;
  /** `sources.<id>.options.branch` or `sources.<id>.uri`. */
  readonly field: string;
  readonly location?: SourceLocation;
}

/** Whether a value is a template (rendered against the kapp's variables). */
function isTemplate(text: string): boolean {
  return text.includes('{{');
}

/**
 * Resolve sources, collecting a diagnostic per source that cannot be fetched or whose repository, path or ref git
 * could misread. A ref that is a template is kept as it is and listed in `templated`, to be rendered and checked
 * with `renderSourceRefs`.
 */
export function resolveSources(
  sources: readonly SourceConfig[],
  manifestDir: string,
  kappFqId: string,
  problems: Diagnostic[],
  substitutions: readonly SourceSubstitution[] = [],
  templated?: TemplatedRef[],
): ResolvedSource[] {
  const out: ResolvedSource[] = [];
  for (const source of sources) {
    const uri = source.uri ?? '';
    const at = locationOf(source, 'uri') ?? locationOf(source);
    if (uri === '') {
      problems.push(diagnosticError(`kapp ${kappFqId}: source '${source.id}' has no uri`, at));
      continue;
    }
    let parsed;
    try {
      parsed =
        uri.includes('.git') || uri.startsWith('file://')
          ? parseSourceUri(uri)
          : ({ kind: 'file', path: uri } as const);
    } catch (e) {
      if (!(e instanceof SourceUriError)) throw e;
      problems.push(diagnosticError(`kapp ${kappFqId}: ${e.message}`, at));
      continue;
    }
    const id = source.id || sourceFqId(parsed, '');
    // The id names the source's directory in the kapp's workspace directory (a git source without one uses its fqId).
    const idProblem = id === '' && parsed.kind === 'git' ? undefined : nameProblem(id);
    if (idProblem) {
      problems.push(
        diagnosticError(
          `kapp ${kappFqId}: source id \`${id}\` ${idProblem}${source.id ? '' : ` (it comes from the uri \`${uri}\`)`}`,
          (source.id ? locationOf(source, 'id') : undefined) ?? at,
          { hint: source.id ? NAME_HINT : `give the source an explicit \`id:\`; ${NAME_HINT}` },
        ),
      );
      continue;
    }
    if (parsed.kind === 'file') {
      out.push({ kind: 'file', id, path: path.resolve(manifestDir, parsed.path), uri });
      continue;
    }
    const branch = source.options?.branch;
    const fromBranch = typeof branch === 'string' && branch !== '';
    const ref = fromBranch ? branch : parsed.ref;
    const refField = fromBranch ? 'options.branch' : 'uri';
    const refAt = (fromBranch && source.options ? locationOf(source.options, 'branch') : undefined) ?? at;
    if (ref === '') {
      problems.push(
        diagnosticError(
          `kapp ${kappFqId}: git source '${id}' names no ref: add '#<branch-or-tag>' to its uri or set options.branch`,
          at,
        ),
      );
      continue;
    }
    // Nothing git could read as an option or a command reaches it (see gitRefProblem and gitRepoProblem).
    const refused = (field: string, value: string, problem: string, loc = at) =>
      problems.push(
        diagnosticError(`kapp ${kappFqId}: source '${id}': ${field} \`${value}\` is refused: ${problem}`, loc, {
          hint: 'git sources are `<repository>//<path>#<ref>` with a plain branch, tag or commit as the ref',
        }),
      );
    const repoProblem = gitRepoProblem(parsed.repo);
    const pathProblem = gitPathProblem(parsed.path);
    const refProblem = isTemplate(ref) ? undefined : gitRefProblem(ref);
    if (repoProblem) refused('repository (uri)', parsed.repo, repoProblem);
    if (pathProblem) refused('path (uri)', parsed.path, pathProblem);
    if (refProblem) refused(`ref (${refField})`, ref, refProblem, refAt);
    if (repoProblem || pathProblem || refProblem) continue;
    // A templated ref is listed with the index of the source it belongs to (pushed just below).
    const noteTemplated = (): void => {
      if (isTemplate(ref)) {
        templated?.push({
          index: out.length,
          field: `sources.${id}.${refField}`,
          ...(refAt ? { location: refAt } : {}),
        });
      }
    };
    const fqId = sourceFqId(parsed, source.id);
    const sub = findSubstitution(parsed.repo, substitutions);
    if (sub) {
      const substituted = substitute(sub, parsed, ref);
      if (typeof substituted === 'string') {
        problems.push(diagnosticError(`kapp ${kappFqId}: source '${id}': ${substituted}`, at));
        continue;
      }
      if (substituted.kind === 'git') {
        const problem = gitRepoProblem(substituted.repo);
        if (problem) {
          refused('substituted repository', substituted.repo, problem);
          continue;
        }
        noteTemplated();
      }
      out.push(
        substituted.kind === 'file'
          ? { kind: 'file', id, path: substituted.path, uri }
          : { kind: 'git', id, fqId, repo: substituted.repo, path: parsed.path, ref, uri },
      );
      continue;
    }
    // A local repository path is relative to the manifest, like a file source.
    const repo =
      /^[./]/.test(parsed.repo) && !parsed.repo.includes(':') ? path.resolve(manifestDir, parsed.repo) : parsed.repo;
    noteTemplated();
    out.push({ kind: 'git', id, fqId, repo, path: parsed.path, ref, uri });
  }
  return out;
}

/**
 * Render the templated refs of a kapp's git sources (`options.branch: "{{ .ref }}"`, a stack's `versions`, a
 * `#{{ .ref }}` in the uri) with `render`, and check what they render to as any ref is checked. The rendered refs
 * replace the templates in `sources`.
 */
export function renderSourceRefs(
  sources: ResolvedSource[],
  templated: readonly TemplatedRef[],
  kappFqId: string,
  render: (text: string, field: string) => string,
  problems: Diagnostic[],
): void {
  for (const t of templated) {
    const source = sources[t.index];
    if (source?.kind !== 'git') continue;
    let ref: string;
    try {
      ref = render(source.ref, t.field).trim();
    } catch (e) {
      if (!(e instanceof Error)) throw e;
      problems.push(diagnosticError(`kapp ${kappFqId}: ${t.field}: ${e.message}`, t.location));
      continue;
    }
    const problem = ref === '' ? 'it renders to an empty ref' : gitRefProblem(ref);
    if (problem) {
      problems.push(
        diagnosticError(
          `kapp ${kappFqId}: source '${source.id}': ref (${t.field}) \`${source.ref}\` renders to \`${ref}\`, which is refused: ${problem}`,
          t.location,
          { hint: 'a ref must render to a plain branch, tag or commit' },
        ),
      );
      continue;
    }
    sources[t.index] = { ...source, ref };
  }
}
