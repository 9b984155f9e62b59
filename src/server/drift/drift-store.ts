/**
 * The drift store: what the server keeps of each stack's drift checks, shared by every instance of a backend —
 * the latest check's report in full, the history of checks (the newest `MAX_CHECKS`), the drift episodes (the newest
 * `MAX_EPISODES`), the outputs marked noisy, what the previous check read (for the noisy marks), and the schedule's
 * next check. Two implementations share this interface: files under the server's data directory (one instance holds
 * it) and PostgreSQL (migration 0010, any number of instances).
 *
 * - `recordCheck` applies a check to its stack's record in one step (`applyCheck`, the same rule on both backends):
 *   a check that finds drift opens an episode or extends the open one; a check in sync closes it; a check whose state
 *   is unknown leaves it as it is;
 * - `claimDue` hands each due scheduled check to one instance: the first `claimDue` of a stack after `schedule` that
 *   finds it due moves its next check one interval on (with PostgreSQL, by the database's clock, in one `UPDATE`).
 */
import { randomUUID } from 'node:crypto';
import { KappsError } from '../../diagnostics/errors.js';
import type {
  DriftCheckSummary,
  DriftEpisode,
  DriftReport,
  DriftState,
  FleetStack,
  NoisyOutput,
} from '../../api/index.js';

/** Checks kept per stack, episodes kept per stack, noisy marks kept per stack. */
export const MAX_CHECKS = 100;
export const MAX_EPISODES = 50;
export const MAX_NOISY = 1000;
/** Kapp ids an episode lists at the most. */
const MAX_EPISODE_KAPPS = 1000;
/** Remediations an episode lists at the most (one per episode is queued; the cap guards the record). */
const MAX_REMEDIATIONS = 10;

/**
 * An output marked noisy, with the digest of its kapp's entry in the release it was marked against: when a release
 * changes that entry (the kapp was installed again), the mark is dropped.
 */
export interface NoisyMark extends NoisyOutput {
  readonly entry: string;
}

/** What a check read: its release and each output's digest (the next check tells noise from drift with it). */
export interface PreviousRead {
  readonly basedOnRevision: number | null;
  readonly digests: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** The latest check, as the API shows it: its report and the run that made it. */
export type LatestCheck = DriftReport & { readonly runId: string };

/** What is kept of one stack. */
export interface StackDriftRecord {
  readonly latest: LatestCheck | null;
  /** Newest first. */
  readonly history: readonly DriftCheckSummary[];
  /** Newest first; an open episode (closedAt null) is the first. */
  readonly episodes: readonly DriftEpisode[];
  readonly noisy: readonly NoisyMark[];
  readonly previous: PreviousRead | null;
}

export const EMPTY_RECORD: StackDriftRecord = { latest: null, history: [], episodes: [], noisy: [], previous: null };

/** A stack's drift as the fleet shows it. */
export type FleetDrift = NonNullable<FleetStack['drift']>;

/** What a check changed: the episode it belongs to now, and whether it opened or closed one. */
export interface CheckOutcome {
  /** The open episode after the check (opened or extended), or null. */
  readonly episode: DriftEpisode | null;
  /** The check opened `episode`. */
  readonly opened: boolean;
  /** The episode the check closed (the stack is in sync again), or null. */
  readonly resolved: DriftEpisode | null;
}

/** A stack the scheduler checks: every `everySeconds`, the first check `offsetSeconds` after it is first seen. */
export interface ScheduledStack {
  readonly project: string;
  readonly stack: string;
  readonly everySeconds: number;
  readonly offsetSeconds: number;
}

export interface StackKey {
  readonly project: string;
  readonly stack: string;
}

export interface DriftStore {
  /** For messages: a directory, or a URL with its password masked. */
  readonly description: string;
  /** A stack's record (empty when it was never checked). */
  get(project: string, stack: string): Promise<StackDriftRecord>;
  /** Record a finished check of the stack (made by `runId`); the episode it opened, extended or closed. */
  recordCheck(project: string, stack: string, runId: string, report: DriftReport): Promise<CheckOutcome>;
  /** Record a run queued to remediate episode `episodeId`. */
  addRemediation(
    project: string,
    stack: string,
    episodeId: string,
    remediation: { runId: string; type: string },
  ): Promise<void>;
  /** Replace the stack's noisy marks (at most `MAX_NOISY` kept). */
  setNoisy(project: string, stack: string, marks: readonly NoisyMark[]): Promise<void>;
  /** Every checked stack's drift summary, by `project/stack`. */
  summaries(): Promise<Map<string, FleetDrift>>;
  /**
   * Make sure each stack has a schedule: a stack seen for the first time is due `offsetSeconds` from now; a stack
   * whose next check is further away than its interval (the interval was shortened) is due within the interval.
   */
  schedule(stacks: readonly ScheduledStack[]): Promise<void>;
  /** The stacks among `stacks` whose check is due, each moved one interval on; each is handed to one caller. */
  claimDue(stacks: readonly StackKey[]): Promise<StackKey[]>;
  /** When each scheduled stack is next checked (ISO), by `project/stack`. */
  nextChecks(): Promise<Map<string, string>>;
  close(): Promise<void>;
}

/** A failure of the drift store; `unavailable`: the backend is down for now. */
export class DriftStoreError extends KappsError {
  readonly unavailable: boolean;
  constructor(message: string, unavailable = false) {
    super(message);
    this.unavailable = unavailable;
  }
}

/** The key of a stack in maps: `project/stack` (names have no `/`). */
export function stackKey(project: string, stack: string): string {
  return `${project}/${stack}`;
}

/** The summary of one check as its history lists it. */
function summaryOf(runId: string, report: DriftReport, episodeId: string | null): DriftCheckSummary {
  return {
    runId,
    checkedAt: report.checkedAt,
    state: report.state,
    basedOnRevision: report.basedOnRevision,
    drifted: report.kapps.filter((k) => k.state === 'drifted').map((k) => k.id),
    unknown: report.kapps.filter((k) => k.state === 'unknown').map((k) => k.id),
    episodeId,
  };
}

/**
 * A stack's record after a check: the report becomes the latest, its summary heads the history, and the episode
 * opens (drifted, none open), grows (drifted, one open: `lastSeenAt`, `checks`, `kapps`) or closes (in sync). An
 * `unknown` check leaves the episode as it is. Pure: both backends apply it.
 */
export function applyCheck(
  record: StackDriftRecord,
  runId: string,
  report: DriftReport,
  newId: () => string = randomUUID,
): { record: StackDriftRecord; outcome: CheckOutcome } {
  const open = record.episodes[0]?.closedAt === null ? record.episodes[0] : undefined;
  const rest = open ? record.episodes.slice(1) : record.episodes;
  const drifted = report.kapps.filter((k) => k.state === 'drifted').map((k) => k.id);
  let episode: DriftEpisode | null = open ?? null;
  let opened = false;
  let resolved: DriftEpisode | null = null;
  let episodes: DriftEpisode[] = [...record.episodes];
  if (report.state === 'drifted') {
    episode = open
      ? {
          ...open,
          lastSeenAt: report.checkedAt,
          checks: open.checks + 1,
          kapps: [...new Set([...open.kapps, ...drifted])].slice(0, MAX_EPISODE_KAPPS),
        }
      : {
          id: newId(),
          openedAt: report.checkedAt,
          openedBy: runId,
          lastSeenAt: report.checkedAt,
          checks: 1,
          kapps: drifted.slice(0, MAX_EPISODE_KAPPS),
          closedAt: null,
          remediations: [],
        };
    opened = !open;
    episodes = [episode, ...rest];
  } else if (report.state === 'inSync' && open) {
    resolved = { ...open, closedAt: report.checkedAt };
    episode = null;
    episodes = [resolved, ...rest];
  }
  const previous: PreviousRead | null =
    report.basedOnRevision === null && Object.keys(report.readDigests).length === 0
      ? record.previous
      : { basedOnRevision: report.basedOnRevision, digests: report.readDigests };
  return {
    record: {
      latest: { ...report, runId },
      history: [
        summaryOf(runId, report, report.state === 'drifted' ? (episode?.id ?? null) : null),
        ...record.history,
      ].slice(0, MAX_CHECKS),
      episodes: episodes.slice(0, MAX_EPISODES),
      noisy: record.noisy,
      previous,
    },
    outcome: { episode, opened, resolved },
  };
}

/** The record with a remediation added to episode `episodeId` (unchanged when it is not kept). */
export function withRemediation(
  record: StackDriftRecord,
  episodeId: string,
  remediation: { runId: string; type: string },
): StackDriftRecord {
  return {
    ...record,
    episodes: record.episodes.map((e) =>
      e.id === episodeId && e.remediations.length < MAX_REMEDIATIONS
        ? { ...e, remediations: [...e.remediations, remediation] }
        : e,
    ),
  };
}

/** The fleet's summary of a record; undefined before its first check. */
export function fleetDriftOf(record: StackDriftRecord): FleetDrift | undefined {
  const latest = record.latest;
  if (!latest) return undefined;
  const open = record.episodes[0]?.closedAt === null ? record.episodes[0] : undefined;
  const count = (state: DriftState) => latest.kapps.filter((k) => k.state === state).length;
  return {
    state: latest.state,
    checkedAt: latest.checkedAt,
    runId: latest.runId,
    drifted: count('drifted'),
    unknown: count('unknown'),
    since: open?.openedAt ?? null,
  };
}

/** Open the drift store of a backend. */
export async function openDriftStore(
  spec: { kind: 'file' } | { kind: 'postgres'; url: string },
  dataDir: string,
): Promise<DriftStore> {
  if (spec.kind === 'file') {
    const { FileDriftStore } = await import('./file-drift-store.js');
    return new FileDriftStore(dataDir);
  }
  const { PgDriftStore } = await import('./pg-drift-store.js');
  return new PgDriftStore(spec.url);
}
