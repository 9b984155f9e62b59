/**
 * Steps are started by kapps' small process server (forking from a process that holds a whole stack in memory
 * costs more per step), or in kapps' own process with KAPPS_INPROCESS_SPAWN=1. Both run the same steps.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupProjects, fixtureProject, kapp } from '../support/project.js';

afterAll(cleanupProjects);

const parentProbe = {
  name: 'parent',
  command: 'sh',
  args: `-c 'tr "\\000" " " < /proc/$PPID/cmdline > parent.txt'`,
};

describe('the process server', () => {
  it('starts steps by default, and kapps itself with KAPPS_INPROCESS_SPAWN=1', async () => {
    const p = fixtureProject({ manifests: { web: { kapps: [kapp('k', { apply_install: [parentProbe] })] } } });
    const parentFile = path.join(p.workspace, 'web', 'k', 'parent.txt');

    const viaServer = await p.run('install', ['-y']);
    expect(viaServer.code, viaServer.stderr).toBe(0);
    const server = readFileSync(parentFile, 'utf8');
    expect(server).toContain('dist/bin/process-server.js');
    // A small young generation and no V8 helper threads: each fork copies and then faults on less of the server.
    expect(server).toContain('--max-semi-space-size=1 --single-threaded ');

    const inProcess = await p.run('install', ['-y'], { env: { KAPPS_INPROCESS_SPAWN: '1' } });
    expect(inProcess.code, inProcess.stderr).toBe(0);
    const parent = readFileSync(parentFile, 'utf8');
    expect(parent).toContain('dist/bin/kapps.js');
    expect(parent).not.toContain('process-server.js');
  });

  it.runIf(availableParallelism() >= 2)(
    'starts a second server while the first is busy (on a machine with two cores or more)',
    async () => {
      const p = fixtureProject({ manifests: { web: { kapps: [kapp('a', {}), kapp('b', {})] } } });
      const started = path.join(p.workspace, 'web', 'b', 'started');
      // a keeps its server busy until b has started.
      const a = {
        name: 'a',
        command: 'sh',
        args: `-c 'echo $PPID > ppid; tr "\\000" " " < /proc/$PPID/cmdline > parent.txt; i=0; while [ ! -f ${started} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done'`,
      };
      const b = {
        name: 'b',
        command: 'sh',
        args: `-c 'echo $PPID > ppid; tr "\\000" " " < /proc/$PPID/cmdline > parent.txt; touch started'`,
      };
      p.write('manifests/web.yaml', { kapps: [kapp('a', { apply_install: [a] }), kapp('b', { apply_install: [b] })] });
      const r = await p.run('install', ['-y', '--workers', '2']);
      expect(r.code, r.stderr).toBe(0);
      const ppid = (k: string) => readFileSync(path.join(p.workspace, 'web', k, 'ppid'), 'utf8').trim();
      expect(ppid('a')).not.toBe(ppid('b'));
      for (const k of ['a', 'b']) {
        expect(readFileSync(path.join(p.workspace, 'web', k, 'parent.txt'), 'utf8')).toContain('process-server.js');
      }
    },
  );
});
