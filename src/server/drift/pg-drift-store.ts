/**
 * The drift store on PostgreSQL (`kapps_drift_stacks`, migration 0010), shared by every instance: a stack's record is
 * changed in one transaction holding its row (`SELECT … FOR UPDATE`), so two instances recording checks of one stack
 * never lose one; a scheduled check is claimed by the one `UPDATE … SET next_at = now() + interval WHERE next_at <=
 * now()` that finds it due, by the database's clock, so with several instances each check runs once.
 */
import type pg from 'pg';
import type { DriftReport } from '../../api/index.js';
import { PgDatabase } from '../../pg/pool.js';
import { transaction } from '../../pg/transaction.js';
import {
  applyCheck,
  DriftStoreError,
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

/** A stored record, with the defaults of a row made by the schedule alone (`{}`). */
function recordOf(stored: Partial<StackDriftRecord> | null | undefined): StackDriftRecord {
  return { ...EMPTY_RECORD, ...(stored ?? {}) };
}

export class PgDriftStore implements DriftStore {
  readonly #db: PgDatabase;
  readonly #pool: pg.Pool;

  constructor(url: string) {
    this.#db = new PgDatabase(url, {
      name: 'drift store',
      applicationName: 'kapps-serve-drift',
      maxConnections: 2,
      error: (message, unavailable) => new DriftStoreError(message, unavailable),
    });
    this.#pool = this.#db.pool;
  }

  get description(): string {
    return this.#db.description;
  }

  get(project: string, stack: string): Promise<StackDriftRecord> {
    return this.#db.run('cannot read the drift of a stack', async () => {
      const r = await this.#pool.query<{ record: Partial<StackDriftRecord> }>(
        'SELECT record FROM kapps_drift_stacks WHERE project = $1 AND stack = $2',
        [project, stack],
      );
      return recordOf(r.rows[0]?.record);
    });
  }

  recordCheck(project: string, stack: string, runId: string, report: DriftReport): Promise<CheckOutcome> {
    return this.#change('cannot record a drift check', project, stack, (record) => {
      const next = applyCheck(record, runId, report);
      return { record: next.record, value: next.outcome };
    });
  }

  addRemediation(
    project: string,
    stack: string,
    episodeId: string,
    remediation: { runId: string; type: string },
  ): Promise<void> {
    return this.#change('cannot record a remediation', project, stack, (record) => ({
      record: withRemediation(record, episodeId, remediation),
      value: undefined,
    }));
  }

  setNoisy(project: string, stack: string, marks: readonly NoisyMark[]): Promise<void> {
    return this.#change('cannot record noisy outputs', project, stack, (record) => ({
      record: { ...record, noisy: marks.slice(0, MAX_NOISY) },
      value: undefined,
    }));
  }

  summaries(): Promise<Map<string, FleetDrift>> {
    return this.#db.run('cannot read the drift of the fleet', async () => {
      const r = await this.#pool.query<{ project: string; stack: string; summary: FleetDrift }>(
        'SELECT project, stack, summary FROM kapps_drift_stacks WHERE summary IS NOT NULL',
      );
      return new Map(r.rows.map((row) => [stackKey(row.project, row.stack), row.summary]));
    });
  }

  async schedule(stacks: readonly ScheduledStack[]): Promise<void> {
    if (stacks.length === 0) return;
    await this.#db.write('cannot schedule drift checks', () =>
      this.#pool.query(
        `INSERT INTO kapps_drift_stacks (project, stack, next_at, every_seconds)
         SELECT p, s, now() + make_interval(secs => o), e
           FROM unnest($1::text[], $2::text[], $3::integer[], $4::integer[]) AS t(p, s, e, o)
         ON CONFLICT (project, stack) DO UPDATE
            SET every_seconds = EXCLUDED.every_seconds,
                next_at = CASE WHEN kapps_drift_stacks.next_at IS NULL THEN EXCLUDED.next_at
                               ELSE LEAST(kapps_drift_stacks.next_at,
                                          now() + make_interval(secs => EXCLUDED.every_seconds)) END`,
        [
          stacks.map((s) => s.project),
          stacks.map((s) => s.stack),
          stacks.map((s) => s.everySeconds),
          stacks.map((s) => s.offsetSeconds),
        ],
      ),
    );
  }

  claimDue(stacks: readonly StackKey[]): Promise<StackKey[]> {
    if (stacks.length === 0) return Promise.resolve([]);
    return this.#db.run('cannot claim drift checks', async () => {
      const r = await this.#pool.query<StackKey>(
        `UPDATE kapps_drift_stacks SET next_at = now() + make_interval(secs => every_seconds)
          WHERE next_at <= now() AND every_seconds IS NOT NULL
            AND (project, stack) IN (SELECT * FROM unnest($1::text[], $2::text[]))
          RETURNING project, stack`,
        [stacks.map((s) => s.project), stacks.map((s) => s.stack)],
      );
      return r.rows.map((row) => ({ project: row.project, stack: row.stack }));
    });
  }

  nextChecks(): Promise<Map<string, string>> {
    return this.#db.run('cannot read the drift schedule', async () => {
      const r = await this.#pool.query<{ project: string; stack: string; next_at: Date }>(
        'SELECT project, stack, next_at FROM kapps_drift_stacks WHERE next_at IS NOT NULL',
      );
      return new Map(r.rows.map((row) => [stackKey(row.project, row.stack), row.next_at.toISOString()]));
    });
  }

  close(): Promise<void> {
    return this.#db.close();
  }

  /** Change a stack's record in one transaction holding its row; returns the change's value. */
  #change<T>(
    what: string,
    project: string,
    stack: string,
    change: (record: StackDriftRecord) => { record: StackDriftRecord; value: T },
  ): Promise<T> {
    return this.#db.write(what, () =>
      transaction(this.#pool, async (client) => {
        await client.query(
          'INSERT INTO kapps_drift_stacks (project, stack) VALUES ($1, $2) ON CONFLICT (project, stack) DO NOTHING',
          [project, stack],
        );
        const r = await client.query<{ record: Partial<StackDriftRecord> }>(
          'SELECT record FROM kapps_drift_stacks WHERE project = $1 AND stack = $2 FOR UPDATE',
          [project, stack],
        );
        const { record, value } = change(recordOf(r.rows[0]?.record));
        const summary = fleetDriftOf(record);
        await client.query(
          'UPDATE kapps_drift_stacks SET record = $3, summary = $4 WHERE project = $1 AND stack = $2',
          [project, stack, JSON.stringify(record), summary ? JSON.stringify(summary) : null],
        );
        return value;
      }),
    );
  }
}
