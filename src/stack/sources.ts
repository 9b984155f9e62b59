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
import { error as diagnosticError, type Diagnostic } from '../diagnostics/diagnostic.js';
import { parseSourceUri, sourceFqId, SourceUriError } from '../config/index.js';
import { NAME_HINT, nameProblem } from '../config/names.js';
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

/** Resolve sources, collecting a diagnostic per source that cannot be fetched. */
export function resolveSources(
  sources: readonly SourceConfig[],
  manifestDir: string,
  kappFqId: string,
  problems: Diagnostic[],
  substitutions: readonly SourceSubstitution[] = [],
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
      out.push({ kind: 'file', id, path: path.resolve(manifestDir, parsed.path) });
      continue;
    }
    const branch = source.options?.branch;
    const ref = typeof branch === 'string' && branch !== '' ? branch : parsed.ref;
    if (ref === '') {
      problems.push(
        diagnosticError(
          `kapp ${kappFqId}: git source '${id}' names no ref: add '#<branch-or-tag>' to its uri or set options.branch`,
          at,
        ),
      );
      continue;
    }
    const fqId = sourceFqId(parsed, source.id);
    const sub = findSubstitution(parsed.repo, substitutions);
    if (sub) {
      const substituted = substitute(sub, parsed, ref);
      if (typeof substituted === 'string') {
        problems.push(diagnosticError(`kapp ${kappFqId}: source '${id}': ${substituted}`, at));
        continue;
      }
      out.push(
        substituted.kind === 'file'
          ? { kind: 'file', id, path: substituted.path }
          : { kind: 'git', id, fqId, repo: substituted.repo, path: parsed.path, ref },
      );
      continue;
    }
    // A local repository path is relative to the manifest, like a file source.
    const repo =
      /^[./]/.test(parsed.repo) && !parsed.repo.includes(':') ? path.resolve(manifestDir, parsed.repo) : parsed.repo;
    out.push({ kind: 'git', id, fqId, repo, path: parsed.path, ref });
  }
  return out;
}
