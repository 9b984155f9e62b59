/**
 * `kapps release logs`: print the log of a release (the latest, or `--revision N`) as text, and with `--follow`
 * keep printing while the release is applying or deleting, until it ends.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { KappsError } from '../diagnostics/errors.js';
import { describeHolder, isRunningPhase, type Release } from '../release/index.js';
import { formatLogLine } from '../log/line.js';
import { ReleaseNotFoundError } from '../release/errors.js';
import type { ReleaseStore } from '../release/store-types.js';

export interface ReleaseLogsOptions {
  readonly project: string;
  readonly stack: string;
  readonly revision: number | undefined;
  readonly kapp: string | undefined;
  readonly follow: boolean;
  readonly out: NodeJS.WritableStream;
  readonly err: NodeJS.WritableStream;
  /** Between two reads while following. */
  readonly pollMs?: number;
}

/** Bytes of log read at once. */
const CHUNK_BYTES = 256 * 1024;

/** Print the log; returns once it is printed (with `follow`, once the release has ended). */
export async function printReleaseLog(store: ReleaseStore, options: ReleaseLogsOptions): Promise<void> {
  const { project, stack, kapp, out } = options;
  let release = await findRelease(store, project, stack, options.revision);
  const revision = release.revision;
  let offset = 0;
  let printed = 0;
  for (;;) {
    // The phase is read before the log: a release writes its final phase only after its whole log, so once a
    // final phase is seen, reading to the end of the log reads all of it.
    const running = isRunningPhase(release.phase);
    for (;;) {
      const chunk = await store.readLog(project, stack, revision, offset, CHUNK_BYTES);
      if (chunk.lines.length === 0) break;
      offset = chunk.nextOffset;
      let text = '';
      for (const line of chunk.lines) {
        if (kapp !== undefined && line.kapp !== kapp) continue;
        text += formatLogLine(line);
        printed++;
      }
      if (text !== '') out.write(text);
    }
    if (!options.follow || !running) break;
    const holder = describeHolder(release, new Date());
    if (holder.looksDead) {
      throw new KappsError(`stopped following release ${revision} of ${project}/${stack}: ${holder.text}`);
    }
    await sleep(options.pollMs ?? 250);
    const next = await store.get(project, stack, revision);
    if (!next) throw new ReleaseNotFoundError(`release ${revision} of ${project}/${stack} disappeared`);
    release = next;
  }
  if (printed === 0) {
    const what = kapp === undefined ? 'no log' : `no log lines of ${kapp}`;
    options.err.write(`Release ${revision} of ${project}/${stack} (${release.phase}) has ${what}.\n`);
  }
}

async function findRelease(
  store: ReleaseStore,
  project: string,
  stack: string,
  revision: number | undefined,
): Promise<Release> {
  const latest = await store.latest(project, stack);
  if (!latest) throw new ReleaseNotFoundError(`${project}/${stack} has no releases in ${store.description}`);
  if (revision === undefined || revision === latest.revision) return latest;
  const release = await store.get(project, stack, revision);
  if (!release) {
    throw new ReleaseNotFoundError(
      `release ${revision} of ${project}/${stack} not found (revisions are 1 to ${latest.revision})`,
    );
  }
  return release;
}
