/**
 * Git sources (`<repo>//<path>#<ref>`), fetched with the real git CLI into `<cacheRoot>/.sugarkube/<fqId>/`, the
 * layout Sugarkube uses: a shallow fetch of the one ref, a sparse checkout of the one path, and a relative symlink
 * `<cacheRoot>/<sourceId>` → `.sugarkube/<fqId>/<path>`.
 *
 * Commands go through an injected runner (the CLI passes the run layer's spawner), so this module never spawns
 * processes itself.
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gitPathProblem, gitRefProblem, gitRepoProblem } from '../config/source-uri.js';
import { KappsError } from '../diagnostics/errors.js';

/** Runs one command (no shell) and reports how it ended. */
export type CommandRunner = (
  command: string,
  args: readonly string[],
  options: { cwd: string; timeoutMs: number; signal?: AbortSignal },
) => Promise<{ exitCode: number | null; stdout: string; stderr: string; error?: string }>;

export interface GitSource {
  /** Repository URL or path (local repositories work). */
  readonly repo: string;
  /** Path inside the repository ('' for the root). */
  readonly path: string;
  /** Branch, tag or commit. */
  readonly ref: string;
  /**
   * A commit (full SHA) the source is pinned to (a rollback: the commit recorded for it then): fetched by SHA, and
   * the checkout's marker says `ref@sha`, while the spec still says `ref`.
   */
  readonly pin?: string;
}

/** What a checkout's marker says it was made from: the ref, or `ref@sha` for a pinned source. */
export function checkoutMarker(source: Pick<GitSource, 'ref' | 'pin'>): string {
  return source.pin ? `${source.ref}@${source.pin}` : source.ref;
}

/** Marker file recording which ref a checkout was made from. */
const REF_FILE = 'kapps-ref';
/** Marker file present while kapps makes a checkout: left behind, it means the first fetch did not complete. */
const FETCHING_FILE = 'kapps-fetching';

/** A repository kapps did not make (no markers) but that has a HEAD: a checkout put there by hand. */
function isForeignCheckout(checkoutDir: string): boolean {
  const gitDir = path.join(checkoutDir, '.git');
  return (
    existsSync(path.join(gitDir, 'HEAD')) &&
    !existsSync(path.join(gitDir, REF_FILE)) &&
    !existsSync(path.join(gitDir, FETCHING_FILE))
  );
}

async function git(
  run: CommandRunner,
  args: readonly string[],
  cwd: string,
  what: string,
  timeoutMs = 90_000,
): Promise<string> {
  const r = await run('git', args, { cwd, timeoutMs });
  if (r.exitCode !== 0) {
    const detail = (r.error ?? r.stderr.trim()) || `exit code ${String(r.exitCode)}`;
    throw new KappsError(`${what}: git ${args.join(' ')} failed in ${cwd}: ${detail}`);
  }
  return r.stdout;
}

/**
 * Make sure `checkoutDir` holds `source` at its ref. A missing checkout is created, and so is one whose first fetch
 * never completed (it is removed first). A complete one is brought to the ref when it was made from another ref,
 * or when `update` is set; only if it has no local changes, so that nothing is lost.
 */
export async function acquireGitSource(
  run: CommandRunner,
  source: GitSource,
  checkoutDir: string,
  options: { update: boolean; what: string },
): Promise<'created' | 'updated' | 'present'> {
  const what = options.what;
  // Checked when the stack is loaded; checked again here so that no caller can pass git an option or a helper.
  const problem =
    (gitRepoProblem(source.repo) && `repository \`${source.repo}\` is refused: ${gitRepoProblem(source.repo)}`) ||
    (gitPathProblem(source.path) && `path \`${source.path}\` is refused: ${gitPathProblem(source.path)}`) ||
    (gitRefProblem(source.ref) && `ref \`${source.ref}\` is refused: ${gitRefProblem(source.ref)}`) ||
    (source.pin !== undefined && !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(source.pin) && `pin \`${source.pin}\` is not a full SHA`);
  if (problem) throw new KappsError(`${what}: ${problem}`);
  const marker = checkoutMarker(source);
  const fetched = source.pin ?? source.ref;
  const sparsePath = source.path.replace(/^\/+|\/+$/g, '');
  const refFile = path.join(checkoutDir, '.git', REF_FILE);
  const foreign = isForeignCheckout(checkoutDir);
  // A checkout made by hand is used as it is, unless asked to update it.
  if (foreign && !options.update) return 'present';
  if (existsSync(path.join(checkoutDir, '.git')) && !existsSync(refFile) && !foreign) {
    // The marker is written last: without it the checkout is what an interrupted or failed first fetch left.
    rmSync(checkoutDir, { recursive: true, force: true });
  }
  if (existsSync(refFile) || foreign) {
    const current = foreign ? '(a checkout made outside kapps)' : readFileSync(refFile, 'utf8').trim();
    if (!options.update && current === marker) return 'present';
    const status = await git(run, ['status', '--porcelain'], checkoutDir, what);
    if (status.trim() !== '') {
      throw new KappsError(
        `${what}: the checkout at ${checkoutDir} has local changes; not ${current === marker ? 'updating it' : `switching it from ${current} to ${marker}`}, to prevent losing work (commit, stash or remove them first)`,
      );
    }
    await git(
      run,
      ['fetch', '--depth=1', '--tags', '--end-of-options', 'origin', fetched],
      checkoutDir,
      what,
      60_000,
    );
    await git(
      run,
      ['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', 'FETCH_HEAD', '--'],
      checkoutDir,
      what,
    );
    writeFileSync(refFile, `${marker}\n`);
    return 'updated';
  }
  mkdirSync(path.join(checkoutDir, '.git'), { recursive: true });
  writeFileSync(path.join(checkoutDir, '.git', FETCHING_FILE), '');
  await git(run, ['init', '-q'], checkoutDir, what);
  await git(run, ['remote', 'add', '--end-of-options', 'origin', source.repo], checkoutDir, what);
  await git(run, ['fetch', '--depth=1', '--tags', '--end-of-options', 'origin', fetched], checkoutDir, what, 60_000);
  if (sparsePath) {
    await git(run, ['config', '--end-of-options', 'core.sparseCheckout', 'true'], checkoutDir, what);
    const infoDir = path.join(checkoutDir, '.git', 'info');
    mkdirSync(infoDir, { recursive: true });
    writeFileSync(path.join(infoDir, 'sparse-checkout'), `/${sparsePath}/*\n`);
  }
  await git(
    run,
    ['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', 'FETCH_HEAD', '--'],
    checkoutDir,
    what,
  );
  writeFileSync(refFile, `${marker}\n`);
  rmSync(path.join(checkoutDir, '.git', FETCHING_FILE), { force: true });
  return 'created';
}

/**
 * Whether `checkoutDir` holds a complete checkout made from `ref` (a marker, see `checkoutMarker`), or one made by
 * hand (used as it is).
 */
export function isCheckoutOf(checkoutDir: string, ref: string): boolean {
  if (isForeignCheckout(checkoutDir)) return true;
  try {
    return readFileSync(path.join(checkoutDir, '.git', REF_FILE), 'utf8').trim() === ref;
  } catch {
    return false;
  }
}

/**
 * Create the relative symlink `<cacheRoot>/<linkName>` → `<target>` unless something already exists there; whether
 * it was created.
 */
export function linkSource(cacheRoot: string, linkName: string, target: string): boolean {
  const link = path.join(cacheRoot, linkName);
  try {
    lstatSync(link);
    return false;
  } catch {
    // absent: create it
  }
  mkdirSync(path.dirname(link), { recursive: true });
  symlinkSync(path.relative(path.dirname(link), target) || '.', link);
  return true;
}
