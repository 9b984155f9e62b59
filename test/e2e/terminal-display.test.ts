/**
 * What the terminal shows of a run, on the built CLI: output written with carriage returns (progress bars) on the
 * live list.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupProjects, fixtureProject } from '../support/project.js';

afterAll(cleanupProjects);

describe('the live list', () => {
  it('shows the last state of a line written with carriage returns, as a terminal would', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            {
              id: 'k',
              run_units: {
                main: {
                  plan_install: [
                    {
                      name: 'bar',
                      print: 'always',
                      command: 'printf',
                      args: "'10%%\\r50%%\\r100%%\\nstep 1/2\\rstep 2/2 done\\n'",
                    },
                  ],
                },
              },
            },
          ],
        },
      },
    });
    const r = await p.run('install', ['--reporter', 'listr', '-v']);
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).not.toContain('\r');
    expect(out).toContain('› [web:k] 100%\n› [web:k] step 2/2 done\n');
    // Plain mode keeps the output as the step wrote it.
    const plain = await p.run('install', ['--reporter', 'plain', '-v']);
    expect(plain.stdout + plain.stderr).toContain('[web:k] 10%\r50%\r100%\n');
  });
});
