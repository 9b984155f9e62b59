import { afterAll } from 'vitest';
import { reportOnce } from '../../../src/log/ndjson.js';
import { PgReleaseStore } from '../../../src/release/pg-store.js';
import { PgRunStore } from '../../../src/server/queue/pg-run-store.js';
import { freshDatabases, sql } from '../../support/pg.js';
import { makeRelease } from '../release/helpers.js';
import { DAMAGED_JSON, describeLog, runLog } from './log-contract.js';

const databases = freshDatabases('kapps_log_t');
afterAll(() => databases.dropAll());

const DAMAGED_BYTES = Buffer.byteLength(`${DAMAGED_JSON}\n`);

describeLog('release log in PostgreSQL', async () => {
  const url = await databases.create();
  const told: string[] = [];
  const store = new PgReleaseStore(url, { onDamagedLine: reportOnce((m) => told.push(m)) });
  await store.create(makeRelease('shop', 'dev', 1));
  return {
    append: (lines) => store.appendLog('shop', 'dev', 1, lines),
    appendDamaged: async () => {
      await sql(
        url,
        `INSERT INTO kapps_release_logs (project, stack, revision, byte_offset, byte_end, line)
         SELECT 'shop', 'dev', 1, e, e + $1, $2
           FROM (SELECT coalesce(max(byte_end), 0) AS e FROM kapps_release_logs) AS t`,
        [DAMAGED_BYTES, DAMAGED_JSON],
      );
    },
    read: (offset, maxBytes) => store.readLog('shop', 'dev', 1, offset, maxBytes),
    told,
    cleanup: () => store.close(),
  };
});

describeLog('run log in PostgreSQL', async () => {
  const url = await databases.create();
  const told: string[] = [];
  const store = new PgRunStore(url, { onDamagedLine: reportOnce((m) => told.push(m)) });
  await store.open('i1');
  const { id, append } = await runLog(store);
  return {
    append,
    appendDamaged: async () => {
      await sql(
        url,
        `WITH r AS (UPDATE kapps_runs SET feed_seq = feed_seq + 1, log_bytes = log_bytes + $2
                     WHERE id = $1 RETURNING feed_seq, log_bytes)
         INSERT INTO kapps_run_feed (run_id, seq, kind, data, log_offset, log_length)
         SELECT $1, feed_seq, 'log', $3::jsonb, log_bytes - $2, $2 FROM r`,
        [id, DAMAGED_BYTES, DAMAGED_JSON],
      );
    },
    read: (offset, maxBytes) => store.readLog(id, offset, maxBytes),
    told,
    cleanup: () => store.close(),
  };
});
