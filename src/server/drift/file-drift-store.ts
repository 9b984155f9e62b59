/**
 * The drift store in files (one instance holds the data directory): `<data-dir>/drift/<project>/<stack>.json`, one
 * file per stack holding its record and its schedule, replaced atomically and durably on every change. Every stack's
 * file is read once, at the first operation, and kept in memory; writes are made one at a time.
 */
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DriftReport } from '../../api/index.js';
import { replaceDurably } from '../../log/durable.js';
import {
  applyCheck,
  EMPTY_RECORD,
  fleetDriftOf,
  MAX_NOISY,
  stackKey,
  withRemediation,
  type CheckOutcome,
  type DriftStore,
  type FleetDrift,
  type NoisyMark,
  type ScheduledStack,
  type StackDriftRecord,
  type StackKey,
} from './drift-store.js';

/** One stack's file. */
interface StackFile {
  readonly project: string;
  readonly stack: string;
  readonly record: StackDriftRecord;
  /** When the next scheduled check is due (ms since the epoch), or null: not scheduled. */
  readonly nextAt: number | null;
  readonly everySeconds: number | null;
}

/** A name the file store accepts as a folder or file name (the API's names; never `.`/`..`). */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export class FileDriftStore implements DriftStore {
  readonly #dir: string;
  readonly #stacks = new Map<string, StackFile>();
  #loaded: Promise<void> | undefined;
  #chain: Promise<unknown> = Promise.resolve();

  /** `dataDir`: the server's data directory (the store is its `drift/` folder). */
  constructor(dataDir: string) {
    this.#dir = join(dataDir, 'drift');
  }

  get description(): string {
    return this.#dir;
  }

  async get(project: string, stack: string): Promise<StackDriftRecord> {
    await this.#load();
    return this.#stacks.get(stackKey(project, stack))?.record ?? EMPTY_RECORD;
  }

  recordCheck(project: string, stack: string, runId: string, report: DriftReport): Promise<CheckOutcome> {
    return this.#change(project, stack, (file) => {
      const { record, outcome } = applyCheck(file.record, runId, report);
      return { file: { ...file, record }, value: outcome };
    });
  }

  addRemediation(
    project: string,
    stack: string,
    episodeId: string,
    remediation: { runId: string; type: string },
  ): Promise<void> {
    return this.#change(project, stack, (file) => ({
      file: { ...file, record: withRemediation(file.record, episodeId, remediation) },
      value: undefined,
    }));
  }

  setNoisy(project: string, stack: string, marks: readonly NoisyMark[]): Promise<void> {
    return this.#change(project, stack, (file) => ({
      file: { ...file, record: { ...file.record, noisy: marks.slice(0, MAX_NOISY) } },
      value: undefined,
    }));
  }

  async summaries(): Promise<Map<string, FleetDrift>> {
    await this.#load();
    const out = new Map<string, FleetDrift>();
    for (const [key, file] of this.#stacks) {
      const summary = fleetDriftOf(file.record);
      if (summary) out.set(key, summary);
    }
    return out;
  }

  async schedule(stacks: readonly ScheduledStack[]): Promise<void> {
    for (const s of stacks) {
      await this.#change(s.project, s.stack, (file) => {
        const now = Date.now();
        const every = s.everySeconds * 1000;
        const nextAt = file.nextAt === null ? now + s.offsetSeconds * 1000 : Math.min(file.nextAt, now + every);
        const unchanged = file.nextAt === nextAt && file.everySeconds === s.everySeconds;
        return { file: { ...file, nextAt, everySeconds: s.everySeconds }, value: undefined, unchanged };
      });
    }
  }

  async claimDue(stacks: readonly StackKey[]): Promise<StackKey[]> {
    const due: StackKey[] = [];
    for (const s of stacks) {
      const claimed = await this.#change(s.project, s.stack, (file) => {
        const now = Date.now();
        if (file.nextAt === null || file.everySeconds === null || file.nextAt > now)
          return { file, value: false, unchanged: true };
        return { file: { ...file, nextAt: now + file.everySeconds * 1000 }, value: true };
      });
      if (claimed) due.push({ project: s.project, stack: s.stack });
    }
    return due;
  }

  async nextChecks(): Promise<Map<string, string>> {
    await this.#load();
    const out = new Map<string, string>();
    for (const [key, file] of this.#stacks) if (file.nextAt !== null) out.set(key, new Date(file.nextAt).toISOString());
    return out;
  }

  close(): Promise<void> {
    return this.#serial(() => Promise.resolve());
  }

  /** Read every stack's file once. A file that cannot be parsed is left out (its stack starts afresh). */
  #load(): Promise<void> {
    this.#loaded ??= (async () => {
      await mkdir(this.#dir, { recursive: true, mode: 0o700 });
      for (const project of await readdir(this.#dir)) {
        if (!SAFE_NAME.test(project)) continue;
        const names = await readdir(join(this.#dir, project)).catch(() => [] as string[]);
        for (const name of names) {
          if (!name.endsWith('.json') || !SAFE_NAME.test(name.slice(0, -5))) continue;
          try {
            const file = JSON.parse(await readFile(join(this.#dir, project, name), 'utf8')) as StackFile;
            if (file.project === project && `${file.stack}.json` === name)
              this.#stacks.set(stackKey(file.project, file.stack), file);
          } catch {
            // A damaged file: the stack's drift starts afresh.
          }
        }
      }
    })();
    return this.#loaded;
  }

  /** Change one stack's file (written unless `unchanged`), one change at a time; returns the change's value. */
  #change<T>(
    project: string,
    stack: string,
    change: (file: StackFile) => { file: StackFile; value: T; unchanged?: boolean },
  ): Promise<T> {
    if (!SAFE_NAME.test(project) || !SAFE_NAME.test(stack))
      return Promise.reject(new Error(`not a project or stack name: ${project}/${stack}`));
    return this.#serial(async () => {
      await this.#load();
      const key = stackKey(project, stack);
      const before = this.#stacks.get(key) ?? {
        project,
        stack,
        record: EMPTY_RECORD,
        nextAt: null,
        everySeconds: null,
      };
      const { file, value, unchanged } = change(before);
      if (unchanged && this.#stacks.has(key)) return value;
      await mkdir(join(this.#dir, project), { recursive: true, mode: 0o700 });
      await replaceDurably(join(this.#dir, project, `${stack}.json`), JSON.stringify(file));
      this.#stacks.set(key, file);
      return value;
    });
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(work, work);
    this.#chain = next.catch(() => undefined);
    return next;
  }
}
