/**
 * Turning a kapp's declared sources into things the workspace can fetch. Besides Sugarkube's forms (a git URI
 * `<repo>//<path>#<ref>`, a `file://` path) kapps accepts a plain path, relative to the manifest that declares the
 * kapp. A git source's ref is `options.branch` when set (from the source, a stack `versions` entry or an override),
 * else its `#ref`.
 */
import path from 'node:path';
import { locationOf } from '../config/locations.js';
import type { SourceConfig } from '../config/types.js';
import { error as diagnosticError, type Diagnostic, type SourceLocation } from '../diagnostics/diagnostic.js';
import { parseSourceUri, sourceFqId, SourceUriError } from '../config/index.js';
import { gitPathProblem, gitRefProblem, gitRepoProblem } from '../config/source-uri.js';
import type { ResolvedSource } from '../workspace/workspace.js';

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
    if (parsed.kind === 'file') {
      out.push({ kind: 'file', id, path: path.resolve(manifestDir, parsed.path) });
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
    if (isTemplate(ref)) {
      templated?.push({ index: out.length, field: `sources.${id}.${refField}`, ...(refAt ? { location: refAt } : {}) });
    }
    // A local repository path is relative to the manifest, like a file source.
    const repo =
      /^[./]/.test(parsed.repo) && !parsed.repo.includes(':') ? path.resolve(manifestDir, parsed.repo) : parsed.repo;
    out.push({ kind: 'git', id, fqId: sourceFqId(parsed, source.id), repo, path: parsed.path, ref });
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
