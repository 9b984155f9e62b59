/**
 * Source URIs of kapps (`sources[].uri`), with Sugarkube's rules: a URI containing `.git` is a git source written
 * `<repository>//<path inside it>#<ref>`, a `file://` URI is a local path, and so is a plain path (kapps' addition);
 * a URL of any other kind is an error.
 *
 * Not done here: choosing the ref (`options.branch` beats `#ref`) and checking that a git source is complete
 * enough to fetch; those happen when a workspace is created.
 */

/** A parsed source URI. */
export type ParsedSourceUri =
  | {
      readonly kind: 'git';
      /** Repository URL, e.g. `git@github.com:sugarkube/kapps.git`. */
      readonly repo: string;
      /** Path inside the repository (trimmed; may keep a leading or trailing `/`). */
      readonly path: string;
      /** The `#ref` part, trimmed; empty when absent. */
      readonly ref: string;
    }
  | {
      readonly kind: 'file';
      /** The local path after `file://`. */
      readonly path: string;
    };

/** A URI that names no usable source; the message (and hint) are written for the user. */
export class SourceUriError extends Error {
  constructor(
    message: string,
    /** How to fix it. */
    readonly hint?: string,
  ) {
    super(message);
  }
}

/**
 * Parse a source URI. Git: split at the **last** `//`; a `/` ending the repository part moves to the front of the
 * path; the rest splits at the first `#` into path and ref, both trimmed.
 * @throws SourceUriError for an empty URI, a URL that is neither git nor `file://`, or a git URI without `//`.
 */
export function parseSourceUri(uri: string): ParsedSourceUri {
  if (uri.trim() === '') throw new SourceUriError('a source needs a `uri`');
  if (uri.includes('.git')) {
    const at = uri.lastIndexOf('//');
    let repo = at < 0 ? '' : uri.slice(0, at);
    let rest = at < 0 ? '' : uri.slice(at + 2);
    // `https://host/repo.git` alone: the only `//` is the scheme's.
    if (at < 0 || repo === '' || /^[A-Za-z][A-Za-z0-9+.-]*:$/.test(repo)) {
      throw new SourceUriError(
        `git source URI \`${uri}\` has no \`//\` between the repository and the path inside it`,
        'write `<repository>//<path>#<ref>`, e.g. `git@github.com:org/kapps.git//incubator/tiller#master`',
      );
    }
    if (repo.endsWith('/')) {
      repo = repo.slice(0, -1);
      rest = `/${rest}`;
    }
    const hash = rest.indexOf('#');
    const path = (hash < 0 ? rest : rest.slice(0, hash)).trim();
    const ref = hash < 0 ? '' : rest.slice(hash + 1).trim();
    return { kind: 'git', repo, path, ref };
  }
  if (uri.startsWith('file://')) return { kind: 'file', path: uri.slice('file://'.length) };
  // A plain path (relative to the manifest, or absolute) is a file source too; a URL of another kind is not.
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri) && !/^[^/]*@[^/]*:/.test(uri)) return { kind: 'file', path: uri };
  throw new SourceUriError(
    `can't tell how to fetch source URI \`${uri}\``,
    'use a git URI (containing `.git`) or a `file://` path',
  );
}

/** The last component of a path, ignoring trailing slashes; empty for `/` or an empty path. */
function baseName(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/** A source's default id: the basename of its path (`incubator/tiller/` → `tiller`; `/` → empty). */
export function defaultSourceId(parsed: ParsedSourceUri): string {
  return baseName(parsed.path);
}

/**
 * The fully-qualified id of a source, naming its checkout in a workspace (`.sugarkube/<fqId>/`). Git: the repository
 * URL after its first `:`, without leading slashes, `/` → `-`, without a `.git` suffix, then `-<id>` (with `/` → `-`)
 * when the id is non-empty: `git@github.com:helm/charts.git//stable/wordpress` → `helm-charts-wordpress`.
 * File: the basename of the path.
 */
export function sourceFqId(parsed: ParsedSourceUri, id: string): string {
  if (parsed.kind === 'file') return baseName(parsed.path);
  const colon = parsed.repo.indexOf(':');
  let fq = parsed.repo
    .slice(colon + 1)
    .replace(/^\/+/, '')
    .replaceAll('/', '-');
  if (fq.endsWith('.git')) fq = fq.slice(0, -'.git'.length);
  return id === '' ? fq : `${fq}-${id.replaceAll('/', '-')}`;
}

/**
 * Why git could misread this ref (branch, tag or commit), or undefined when it is safe to pass to `git fetch`. The
 * rules are those of `git check-ref-format` plus what a fetch would read as something else: no leading `-` (an
 * option), no leading `+` or `^` and no `:` (a refspec that forces, negates or writes a local ref), no `..`, `@{`,
 * whitespace, control characters or `~ ^ : ? * [ \`, no leading or trailing `/` or `.`, no `//`, no `.lock` ending.
 */
export function gitRefProblem(ref: string): string | undefined {
  if (ref === '') return 'it is empty';
  if (ref.startsWith('-')) return 'it starts with `-`, so git would read it as an option';
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f]/.test(ref)) return 'it holds whitespace or a control character';
  if (/[~^:?*[\\]/.test(ref)) return 'it holds one of `~ ^ : ? * [ \\`';
  if (ref.startsWith('+')) return 'it starts with `+`, which git reads as a forced refspec';
  if (ref.includes('..')) return 'it holds `..`';
  if (ref.includes('@{') || ref === '@') return 'it holds `@{` or is `@`';
  if (/^[/.]|[/.]$|\/\/|\/\.|\.lock$|\.lock\//.test(ref))
    return 'it starts or ends with `/` or `.`, holds `//`, a component starting with `.`, or ends with `.lock`';
  return undefined;
}

/** Transports kapps lets git use (`GIT_ALLOW_PROTOCOL` is set to the same list). */
export const GIT_PROTOCOLS = 'file:git:http:https:ssh';

/**
 * Why git could misread this repository URL (`git remote add origin <url>`), or undefined when it is safe. Refused:
 * a leading `-` (an option, or an ssh host git would pass to ssh as one), whitespace other than spaces and control
 * characters, `<transport>::<address>` (remote helpers such as `ext::`, which runs a command), and a `scheme://` URL
 * other than ssh, git, http, https and file.
 */
export function gitRepoProblem(repo: string): string | undefined {
  if (repo === '') return 'it is empty';
  if (repo.startsWith('-')) return 'it starts with `-`, so git would read it as an option';
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(repo)) return 'it holds a control character (a newline, a tab or a NUL)';
  if (/^[A-Za-z0-9+.-]*::/.test(repo))
    return 'it uses a `<transport>::` remote helper (such as `ext::`, which runs a command), which kapps does not allow';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(repo);
  if (scheme) {
    const name = (scheme[1] ?? '').toLowerCase();
    if (!['ssh', 'git', 'http', 'https', 'file', 'git+ssh', 'ssh+git'].includes(name))
      return `its scheme \`${name}://\` is not one of ssh, git, http, https, file`;
    const host = repo.slice(scheme[0].length).replace(/^[^/@]*@/, '');
    if (host.startsWith('-')) return 'its host starts with `-`, which ssh would read as an option';
  } else {
    // scp-like `[user@]host:path`: the host (and user) must not start with `-`.
    const scp = /^([^/:]*):/.exec(repo);
    if (scp && /(^|@)-/.test(scp[1] ?? '')) return 'its host starts with `-`, which ssh would read as an option';
  }
  return undefined;
}

/** Why this path inside a git repository is unusable (`..`, control characters), or undefined. */
export function gitPathProblem(p: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(p)) return 'it holds a control character (a newline, a tab or a NUL)';
  if (p.split('/').includes('..')) return 'it holds a `..` component, which would leave the checkout';
  return undefined;
}
