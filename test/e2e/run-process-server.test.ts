/**
 * Steps are started by kapps' small process server (forking from a process that holds a whole stack in memory
 * costs more per step), or in kapps' own process with KAPPS_INPROCESS_SPAWN=1. Both run the same steps.
 */
import { mkdirSync, readFileSync } from 'node:fs';
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

  /**
   * Kapps that wait until all of them have started, so that they all run at once; each writes the pid of the server
   * that started it, and the number of process servers its kapps has (children of kapps running process-server.js).
   */
  function together(ids: readonly string[], dir: string) {
    const all = ids.map((id) => path.join(dir, `started-${id}`)).join(' ');
    const count =
      `ks=$(cut -d" " -f4 /proc/$PPID/stat); n=0; for s in /proc/[0-9]*/stat; do ` +
      `read -r pid comm state pp rest < $s 2>/dev/null || continue; ` +
      `[ "$pp" = "$ks" ] && grep -q process-server.js /proc/$pid/cmdline 2>/dev/null && n=$((n+1)); done; echo $n > servers`;
    return ids.map((id) =>
      kapp(id, {
        apply_install: [
          {
            name: 'meet',
            command: 'sh',
            args: `-c '${count}; echo $PPID > ppid; touch ${path.join(dir, `started-${id}`)}; i=0; while [ $i -lt 200 ]; do ok=1; for f in ${all}; do [ -f $f ] || ok=0; done; [ $ok = 1 ] && break; sleep 0.05; i=$((i+1)); done; [ $ok = 1 ]'`,
          },
        ],
      }),
    );
  }

  it('starts one server for a few kapps at once, and one per four kapps that can run at once, at most one per core', async () => {
    const p = fixtureProject({ manifests: { web: { kapps: [kapp('a', {})] } } });
    const read = (k: string, file: string) => readFileSync(path.join(p.workspace, 'web', k, file), 'utf8').trim();

    // Two kapps running at once: one server starts both (a server costs a Node process's start).
    p.write('manifests/web.yaml', { kapps: together(['a', 'b'], p.root) });
    const two = await p.run('install', ['-y', '--workers', '2']);
    expect(two.code, two.stderr).toBe(0);
    expect(read('a', 'ppid')).toBe(read('b', 'ppid'));
    expect([read('a', 'servers'), read('b', 'servers')]).toEqual(['1', '1']);

    // Six at once: two servers (one per four, at most one per core).
    const six = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
    p.write('manifests/web.yaml', { kapps: together(six, path.join(p.root, 'six')) });
    mkdirSync(path.join(p.root, 'six'));
    const r = await p.run('install', ['-y', '--workers', '6']);
    expect(r.code, r.stderr).toBe(0);
    const servers = Math.min(2, availableParallelism());
    expect(six.map((k) => read(k, 'servers'))).toEqual(six.map(() => String(servers)));
  });
});
