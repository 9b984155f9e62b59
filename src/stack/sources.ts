/**
 * Turning a kapp's declared sources into things the workspace can fetch. Besides Sugarkube's forms (a git URI
 * `<repo>//<path>#<ref>`, a `file://` path) kapps accepts a plain path, relative to the manifest that declares the
 * kapp. A git source's ref is `options.branch` when set (from the source, a stack `versions` entry or an override),
 * else its `#ref`.
 */
import path from 'node:path';
import { locationOf } from '../config/locations.js';
import type { SourceConfig } from '../config/types.js';
import { error as diagnosticError, type Diagnostic } from '../diagnostics/diagnostic.js';
import { parseSourceUri, sourceFqId, SourceUriError } from '../config/index.js';
import { NAME_HINT, nameProblem } from '../config/names.js';
import type { ResolvedSource } from '../workspace/workspace.js';

/** Resolve sources, collecting a diagnostic per source that cannot be fetched. */
export function resolveSources(
  sources: readonly SourceConfig[],
  manifestDir: string,
  kappFqId: string,
  problems: Diagnostic[],
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
    // A local repository path is relative to the manifest, like a file source.
    const repo =
      /^[./]/.test(parsed.repo) && !parsed.repo.includes(':') ? path.resolve(manifestDir, parsed.repo) : parsed.repo;
    out.push({ kind: 'git', id, fqId: sourceFqId(parsed, source.id), repo, path: parsed.path, ref });
  }
  return out;
}
