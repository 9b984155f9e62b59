/**
 * A PostgreSQL database as kapps left it before numbered migrations (test/fixtures/pg/schema-before-migrations.sql:
 * `kapps_schema` and `kapps_runs_schema` at version 2), with a release and its log line, a running run and a spec
 * key in it, for the tests that upgrade it in place.
 */
import { readFileSync } from 'node:fs';
import type { Release } from '../../src/release/types.js';
import { sql } from './pg.js';

const SCHEMA_BEFORE = readFileSync(new URL('../fixtures/pg/schema-before-migrations.sql', import.meta.url), 'utf8');

/** The spec key the database holds. */
export const SPEC_KEY_BEFORE = 'ab'.repeat(32);

/** The id of the run the database holds: `running`, owned by instance `old`, lease generation 3. */
export const RUN_BEFORE = 'run-before';

/** The text of the release's one log line. */
export const LOG_LINE_BEFORE = 'installed before';

/** Make the schema of before in the empty database of `url`, holding `release`. */
export async function seedDatabaseBefore(url: string, release: Release): Promise<void> {
  await sql(url, SCHEMA_BEFORE);
  // The columns as that kapps filled them, taken from the record itself.
  await sql(
    url,
    `INSERT INTO kapps_releases (project, stack, revision, operation, phase, kapps_count, owner, unlocked,
                                 created_at, modified_at, finished_at, heartbeat_at, record)
     SELECT r->>'project', r->>'stack', (r->>'revision')::integer, r->>'operation', r->>'phase',
            json_array_length(r->'spec'->'kapps'), r->'owner', r->'unlocked', (r->>'createdAt')::timestamptz,
            (r->>'modifiedAt')::timestamptz, (r->>'finishedAt')::timestamptz, (r->>'heartbeatAt')::timestamptz, r
       FROM (SELECT $1::json AS r) AS given`,
    [JSON.stringify(release)],
  );
  const line = JSON.stringify({ time: '2026-01-01T00:00:00.000Z', stream: 'kapps', text: LOG_LINE_BEFORE });
  await sql(
    url,
    `INSERT INTO kapps_release_logs (project, stack, revision, byte_offset, byte_end, line)
     VALUES ($1, $2, $3, 0, $4, $5)`,
    [release.project, release.stack, release.revision, Buffer.byteLength(line) + 1, line],
  );
  await sql(
    url,
    `INSERT INTO kapps_runs (id, type, project, stack, status, created_by, created_at, started_at, options, instance,
                             lease_until, feed_seq, lease_generation)
     VALUES ($1, 'apply', $2, $3, 'running', 'ci', now(), now(), '{}'::jsonb, 'old', now() + interval '1 hour', 1, 3)`,
    [RUN_BEFORE, release.project, release.stack],
  );
  await sql(url, `INSERT INTO kapps_run_feed (run_id, seq, kind, data) VALUES ($1, 1, 'status', '{}')`, [RUN_BEFORE]);
  await sql(url, 'INSERT INTO kapps_spec_key (id, key) VALUES (1, $1)', [SPEC_KEY_BEFORE]);
}
