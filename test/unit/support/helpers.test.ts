/**
 * The shared test helpers other tests rely on to see and clean up processes and to build projects: if these are
 * wrong, the "no process left behind" checks elsewhere pass for the wrong reason.
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  isRunning,
  killLeftovers,
  markersKilledAfterEach,
  processesMatching,
  survivors,
  waitForProcess,
} from '../../support/processes.js';
import { cleanupProjects, fixtureProject } from '../../support/project.js';
import { waitFor } from '../../support/wait.js';

afterAll(cleanupProjects);
const newMarker = markersKilledAfterEach();

describe('process helpers', () => {
  it('find a marked process tree, and killLeftovers kills it with its process group', async () => {
    const marker = newMarker();
    // A group leader (detached) with a child that does not carry the marker: the group kill must take it too.
    const leader = spawn('sh', ['-c', 'sleep 30 & echo $!; wait', marker], { detached: true, stdio: 'pipe' });
    let out = '';
    leader.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    await waitFor('the child pid', () => out.includes('\n'));
    const child = Number(out.trim());
    const [found] = await waitForProcess(marker);
    expect(found).toBe(leader.pid);
    expect(isRunning(child)).toBe(true);

    expect(await killLeftovers(marker)).toBe(1);
    expect(await survivors(marker)).toEqual([]);
    await waitFor('the unmarked child to die with its group', () => !isRunning(child), 5000);
    expect(processesMatching(marker)).toEqual([]);
  });

  it('waitFor names what it waited for when it gives up', async () => {
    await expect(waitFor('a thing that never happens', () => false, 50)).rejects.toThrow(
      'timed out waiting for a thing that never happens',
    );
  });
});

describe('fixtureProject', () => {
  it('writes the default stack file, or none with stacks: null; names the folder; makes `name*` files executable', () => {
    const withDefault = fixtureProject({ manifests: { web: { kapps: [] } } });
    expect(withDefault.read('stacks.yaml')).toContain('manifests/web.yaml');
    expect(path.basename(withDefault.dir)).toBe('project');

    const bare = fixtureProject({ name: 'shop', stacks: null, files: { 'bin/tool*': '#!/bin/sh\n', 'a.txt': 'x' } });
    expect(path.basename(bare.dir)).toBe('shop');
    expect(existsSync(bare.path('stacks.yaml'))).toBe(false);
    expect(statSync(bare.path('bin/tool')).mode & 0o111).toBe(0o111);
    expect(statSync(bare.path('a.txt')).mode & 0o111).toBe(0);
    expect(existsSync(bare.path('bin/tool*'))).toBe(false);
  });
});
