/**
 * The files a run reads and writes for its kapps, on the built CLI: template sources and destinations, step
 * capture files, output files and the file trees a release's spec digests are read and written without blocking
 * the event loop (one process runs many runs at once: the runs server); and a template source or an output file too
 * large to hold is refused with the kapp, the field and the file named, instead of being read whole.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeStep as step, libraryKapp } from '../support/library-kapp.js';
import { cleanupProjects } from '../support/project.js';

afterAll(cleanupProjects);

/** The functions of kapps that do a visit's file I/O: none may appear in a stack of synchronous I/O. */
const VISIT_IO = [
  'renderKappTemplates',
  'renderEach',
  'removeSensitiveTemplates',
  'loadOutputs',
  'removeSensitiveOutputFiles',
  'writeCapture',
  'writeConfinedFile',
  'confinedReadPath',
  'removeConfinedFile',
  'checkConfined',
  'treeDigest',
  'kappTemplates',
  'sourceInput',
];

/** The stacks node printed for each synchronous file-system call (`--trace-sync-io`). */
function syncCalls(stderr: string): string[] {
  return stderr
    .split(/WARNING: Detected use of sync API\n/)
    .slice(1)
    .map((block) =>
      block
        .split('\n')
        .filter((line) => /^\s+at /.test(line))
        .join('\n'),
    );
}

describe("a run's file I/O", () => {
  it('renders templates, captures output, reads and deletes outputs and digests sources without blocking', async () => {
    const p = libraryKapp(
      {
        templates: {
          values: { source: 't.tpl', dest: 'values.txt' },
          creds: { source: 't.tpl', dest: 'creds.txt', sensitive: true },
        },
        outputs: [
          { id: 'url', path: 'url.json', format: 'json' },
          { id: 'token', path: 'token.txt', format: 'text', sensitive: true },
        ],
        run_units: {
          main: {
            apply_install: [
              step({ stdout: 'out/captured.txt' }),
              {
                name: 'outputs',
                command: 'kapps-fake',
                args: `--tag outputs --write-file url.json '{"url":"https://k"}' --write-file token.txt s3cr3t`,
                working_dir: 'k',
                load_outputs: true,
              },
            ],
          },
        },
      },
      { 'library/k/t.tpl': 'id={{ .kapp.id }}\n' },
    );
    const r = await p.run('install', ['-y'], { env: { NODE_OPTIONS: '--trace-sync-io' } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const kappDir = '.kapps-workspace/dev/web/k';
    expect(p.read(`${kappDir}/k/values.txt`)).toBe('id=k\n');
    expect(p.read(`${kappDir}/out/captured.txt`)).toContain('hello');
    expect(p.exists(`${kappDir}/k/creds.txt`)).toBe(false);
    expect(p.exists(`${kappDir}/k/token.txt`)).toBe(false);
    expect(p.read(`${kappDir}/k/url.json`)).toContain('https://k');
    // The trace works: something else in the run does synchronous I/O (stdout to a file, for one).
    const calls = syncCalls(r.stderr);
    expect(calls.length).toBeGreaterThan(0);
    const blocking = calls.filter((stack) => VISIT_IO.some((name) => stack.includes(`at ${name} `)));
    expect(blocking).toEqual([]);
  });

  it('refuses a template source larger than 8 MiB, naming the kapp, the template, the file and its line', async () => {
    const p = libraryKapp({
      templates: { big: { source: 'big.tpl', dest: 'big.txt' } },
      run_units: { main: { apply_install: [step()] } },
    });
    writeFileSync(p.path('library/k/big.tpl'), 'x'.repeat(8 * 1024 * 1024 + 1));
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const said = r.stdout + r.stderr;
    expect(said).toContain("kapp web:k: template 'big'");
    expect(said).toContain('big.tpl): the source is 8388609 bytes, more than the 8388608 bytes kapps reads');
    expect(said).toMatch(/library\/k\/sugarkube\.yaml:\d+:\d+/);
    expect(said).not.toMatch(/\n\s+at /);
    expect(existsSync(p.path('.kapps-workspace/dev/web/k/k/big.txt'))).toBe(false);
    expect(p.traceLines()).toEqual([]);
  });

  it('refuses an output file larger than 16 MiB, and deletes it when it is sensitive', async () => {
    const big = (sensitive: boolean) => ({
      outputs: [{ id: 'dump', path: 'dump.txt', format: 'text', sensitive }],
      run_units: {
        main: {
          apply_install: [
            {
              name: 'dump',
              command: 'head',
              args: `-c ${16 * 1024 * 1024 + 1} /dev/zero`,
              working_dir: 'k',
              stdout: 'dump.txt',
              load_outputs: true,
            },
          ],
        },
      },
    });
    const p = libraryKapp(big(false));
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const said = r.stdout + r.stderr;
    expect(said).toMatch(
      /kapp web:k: cannot read output 'dump' from \S+dump\.txt: the file is 16777217 bytes, more than the 16777216 bytes kapps reads/,
    );
    expect(said).not.toMatch(/\n\s+at /);
    expect(p.exists('.kapps-workspace/dev/web/k/k/dump.txt')).toBe(true);

    p.write('library/k/sugarkube.yaml', big(true));
    const s = await p.run('install', ['-y']);
    expect(s.code, s.stdout + s.stderr).toBe(1);
    expect(s.stdout + s.stderr).toContain("cannot read output 'dump'");
    expect(p.exists('.kapps-workspace/dev/web/k/k/dump.txt')).toBe(false);
  });
});
