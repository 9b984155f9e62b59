import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileReleaseStore } from '../../../src/release/file-store.js';
import { reportOnce } from '../../../src/log/ndjson.js';
import { FileRunStore } from '../../../src/server/queue/file-run-store.js';
import { makeRelease } from '../release/helpers.js';
import { DAMAGED_JSON, describeLog, runLog } from './log-contract.js';

describeLog('release log in files', async () => {
  const root = mkdtempSync(join(tmpdir(), 'kapps-log-'));
  const told: string[] = [];
  const store = new FileReleaseStore(root, { onDamagedLine: reportOnce((m) => told.push(m)) });
  await store.create(makeRelease('shop', 'dev', 1));
  return {
    append: (lines) => store.appendLog('shop', 'dev', 1, lines),
    appendDamaged: () => Promise.resolve(appendFileSync(store.logFileOf('shop', 'dev', 1), `${DAMAGED_JSON}\n`)),
    read: (offset, maxBytes) => store.readLog('shop', 'dev', 1, offset, maxBytes),
    told,
    cleanup: () => Promise.resolve(rmSync(root, { recursive: true, force: true })),
  };
});

describeLog('run log in files', async () => {
  const root = mkdtempSync(join(tmpdir(), 'kapps-log-'));
  const told: string[] = [];
  const store = new FileRunStore(root, { onDamagedLine: reportOnce((m) => told.push(m)) });
  await store.open('i1');
  const { id, append } = await runLog(store);
  return {
    append,
    appendDamaged: () => Promise.resolve(appendFileSync(join(root, 'runs', id, 'log.ndjson'), `${DAMAGED_JSON}\n`)),
    read: (offset, maxBytes) => store.readLog(id, offset, maxBytes),
    told,
    cleanup: async () => {
      await store.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
});
