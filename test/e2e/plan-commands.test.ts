/**
 * The planning commands as a user sees them: `generate` (one document, JSON or YAML, chosen phases), `graph` (four
 * formats), `validate` (commands on PATH, a summary, the exit code) and their shared arguments.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kapps, project, removeProjects, text } from '../fixtures/plan/project.js';

afterAll(removeProjects);

const files = {
  'stacks.yaml': text`
    dev:
      provider: local
      provisioner: none
      cluster: c1
      manifests:
        - uri: infra.yaml
        - uri: apps.yaml
  `,
  'infra.yaml': text`
    kapps:
      - id: net
        run_units:
          main:
            apply_install:
              - {name: create, command: tool, args: net create}
      - id: cron
        conditions: ["false"]
  `,
  'apps.yaml': text`
    kapps:
      - id: db
        depends_on: [{id: "infra:net"}]
        run_units:
          main:
            working_dir: db
            env_vars: {PGHOST: localhost}
            apply_install:
              - name: migrate
                command: ./migrate.sh
                args: --all
                timeout: 60
                expected_exit_code: 2
                ignore_errors: true
                load_outputs: true
                stdout: out.json
                stderr: ../logs/err.txt
                print: verbose
                merge_priority: 20
              - name: create
                command: tool
                args: db create
                conditions: ["true"]
                merge_priority: 10
            clean:
              - {name: drop, command: tool, args: db drop}
      - id: web
        depends_on: [{id: db}, {id: "infra:net"}]
        run_units:
          main:
            apply_install:
              - {name: deploy, command: tool, args: web deploy}
  `,
  'bin/tool*': '#!/bin/sh\nexit 0\n',
};

describe('kapps generate', () => {
  it('prints exactly one JSON document: kapps in stack order, steps in run order, paths absolute', async () => {
    const dir = project(files);
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev', 'ws', '-o', 'json', '-i', 'apps:db']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const root = path.join(dir, 'ws/apps/db');
    const none = { plan_install: [], plan_delete: [], apply_delete: [], output: [], clean: [] };
    expect(JSON.parse(r.stdout)).toEqual({
      stack: 'dev',
      kapps: [
        {
          id: 'infra:net',
          dependsOn: [],
          selected: false,
          conditionsOk: true,
          phases: {
            ...none,
            apply_install: [
              {
                name: 'create',
                unit: 'main',
                command: 'tool',
                args: ['net', 'create'],
                env: {},
                workingDir: path.join(dir, 'ws/infra/net'),
                expectedExitCode: 0,
                ignoreErrors: false,
                loadOutputs: false,
                mergePriority: 255,
              },
            ],
          },
        },
        {
          id: 'apps:db',
          dependsOn: ['infra:net'],
          selected: true,
          conditionsOk: true,
          phases: {
            ...none,
            apply_install: [
              {
                name: 'create',
                unit: 'main',
                command: 'tool',
                args: ['db', 'create'],
                env: { PGHOST: 'localhost' },
                workingDir: path.join(root, 'db'),
                expectedExitCode: 0,
                ignoreErrors: false,
                loadOutputs: false,
                conditions: ['true'],
                mergePriority: 10,
              },
              {
                name: 'migrate',
                unit: 'main',
                command: './migrate.sh',
                args: ['--all'],
                env: { PGHOST: 'localhost' },
                workingDir: path.join(root, 'db'),
                timeout: 60,
                expectedExitCode: 2,
                ignoreErrors: true,
                loadOutputs: true,
                stdout: path.join(root, 'db/out.json'),
                stderr: path.join(root, 'logs/err.txt'),
                print: 'verbose',
                mergePriority: 20,
              },
            ],
            clean: [
              {
                name: 'drop',
                unit: 'main',
                command: 'tool',
                args: ['db', 'drop'],
                env: { PGHOST: 'localhost' },
                workingDir: path.join(root, 'db'),
                expectedExitCode: 0,
                ignoreErrors: false,
                loadOutputs: false,
                mergePriority: 255,
              },
            ],
          },
        },
      ],
    });
    expect(r.stdout.endsWith('}\n')).toBe(true);
  });

  it('prints YAML by default, the same document; --phase (repeatable) leaves the other phases empty', async () => {
    const dir = project(files);
    const json = await kapps(dir, [
      'generate',
      'stacks.yaml',
      'dev',
      '-o',
      'json',
      '--phase',
      'clean',
      '--phase',
      'apply_install',
    ]);
    const yaml = await kapps(dir, ['generate', 'stacks.yaml', 'dev', '--phase', 'clean', '--phase', 'apply_install']);
    expect(yaml.code).toBe(0);
    expect(parse(yaml.stdout)).toEqual(JSON.parse(json.stdout));
    const doc = JSON.parse(json.stdout) as { kapps: { id: string; phases: Record<string, { name: string }[]> }[] };
    expect(
      doc.kapps.map(
        (k) =>
          `${k.id} ${Object.entries(k.phases)
            .map(([p, s]) => `${p}=${s.map((x) => x.name).join('+')}`)
            .join(' ')}`,
      ),
    ).toEqual([
      'infra:net plan_install= apply_install=create plan_delete= apply_delete= output= clean=',
      'infra:cron plan_install= apply_install= plan_delete= apply_delete= output= clean=',
      'apps:db plan_install= apply_install=create+migrate plan_delete= apply_delete= output= clean=drop',
      'apps:web plan_install= apply_install=deploy plan_delete= apply_delete= output= clean=',
    ]);
  });

  it('prints the whole document of a big stack, JSON and YAML, as one document would be printed', async () => {
    // 400 kapps: the JSON document is several times the pieces of about 64 KB the CLI writes it in.
    const lines = ['kapps:'];
    for (let i = 0; i < 400; i++) {
      lines.push(`  - id: k${String(i)}`);
      if (i > 0) lines.push('    depends_on:', `      - id: big:k${String(i - 1)}`);
      lines.push('    run_units:', '      main:', '        apply_install:', '          - name: run');
      lines.push(
        '            command: echo',
        `            args: "--index=${String(i)} --name=kapp-${'x'.repeat(i % 50)}"`,
      );
    }
    const dir = project({
      'stacks.yaml': text`
        dev:
          provider: local
          provisioner: none
          cluster: c1
          manifests:
            - uri: big.yaml
      `,
      'big.yaml': `${lines.join('\n')}\n`,
    });
    const json = await kapps(dir, ['generate', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(json.code).toBe(0);
    expect(json.stderr).toBe('');
    expect(json.stdout.length).toBeGreaterThan(4 * 65_536);
    const doc = JSON.parse(json.stdout) as { kapps: { id: string; phases: { apply_install: { args: string[] }[] } }[] };
    expect(json.stdout).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(doc.kapps.map((k) => k.id)).toEqual(Array.from({ length: 400 }, (_, i) => `big:k${String(i)}`));
    expect(doc.kapps[399]?.phases.apply_install[0]?.args).toEqual(['--index=399', `--name=kapp-${'x'.repeat(49)}`]);
    const yaml = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
    expect(yaml.code).toBe(0);
    expect(parse(yaml.stdout)).toEqual(doc);
  });

  it('rejects an unknown phase or format with a usage error', async () => {
    const dir = project(files);
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev', '--phase', 'install']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatchInlineSnapshot(`
      "kapps: Invalid values:
        Argument: phase, Given: "install", Choices: "plan_install", "apply_install", "plan_delete", "apply_delete", "output", "clean"
      Run \`kapps --help\` for usage.
      "
    `);
  });
});

describe('kapps graph', () => {
  const args = ['graph', 'stacks.yaml', 'dev', '-i', 'apps:web', '-i', 'infra:cron'];

  it('text marks the kapps that will be processed and those whose conditions failed', async () => {
    const dir = project(files);
    const r = await kapps(dir, args);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
          infra:net - depends on: <nothing>
          infra:cron (conditions failed) - depends on: <nothing>
          apps:db - depends on: infra:net
        * apps:web - depends on: apps:db, infra:net
    `);
  });

  it('dot, mermaid and json', async () => {
    const dir = project(files);
    const dot = await kapps(dir, [...args, '--format', 'dot']);
    expect(dot.stdout).toBe(text`
      digraph {
      label = "Stack: dev";
      labelloc = "t";
      node [shape=box,style="rounded,bold"]
      "infra:net" [fontcolor="#FF0000" color="#FF0000"]
      "infra:net";
      "infra:cron" [fontcolor="#FF0000" color="#FF0000" label="infra:cron (conditions failed)"]
      "infra:cron";
      "apps:db" [fontcolor="#FF0000" color="#FF0000"]
      "infra:net" -> "apps:db";
      "apps:db" -> "apps:web";
      "infra:net" -> "apps:web";
      {
        rank = sink;
        notelabel [shape=plain, fontcolor="#FF0000", label="Nodes in red will not be processed"];
      }
      }
    `);
    const mermaid = await kapps(dir, [...args, '-f', 'mermaid']);
    expect(mermaid.stdout).toBe(text`
      graph TD
        n0["infra:net"]:::unprocessed
        n1["infra:cron (conditions failed)"]:::unprocessed
        n2["apps:db"]:::unprocessed
        n3["apps:web"]
        n0 --> n2
        n2 --> n3
        n0 --> n3
        classDef unprocessed color:#FF0000,stroke:#FF0000
    `);
    const json = await kapps(dir, [...args, '-f', 'json']);
    expect(JSON.parse(json.stdout)).toEqual({
      nodes: [
        { id: 'infra:net', dependsOn: [], processed: false, selected: false, conditionsOk: true },
        { id: 'infra:cron', dependsOn: [], processed: false, selected: true, conditionsOk: false },
        { id: 'apps:db', dependsOn: ['infra:net'], processed: false, selected: false, conditionsOk: true },
        { id: 'apps:web', dependsOn: ['apps:db', 'infra:net'], processed: true, selected: true, conditionsOk: true },
      ],
    });
  });
});

describe('kapps validate', () => {
  it('finds every command and binary, prints a summary and exits 0', async () => {
    const dir = project(files);
    const r = await kapps(dir, ['validate', 'stacks.yaml', 'dev', '-x', 'apps:db', '-v'], {
      PATH: path.join(dir, 'bin'),
    });
    expect(r.stderr).toBe('');
    expect(r.stdout.replaceAll(dir, '<dir>')).toBe(text`
      * infra:net
          found tool (<dir>/bin/tool)
      * apps:web
          found tool (<dir>/bin/tool)

      All 2 kapp(s) validated: every phase plans and every command was found
    `);
    expect(r.code).toBe(0);
  });

  it('lists what is missing, per kapp and step, and exits 1', async () => {
    const dir = project({
      ...files,
      'apps.yaml': text`
        kapps:
          - id: db
            requires: [postgres]
            run_units:
              main:
                binaries: [psql]
                apply_install:
                  - {name: migrate, command: ./migrate.sh, binaries: [tool, jq]}
                  - {name: create, command: createdb}
              off:
                conditions: ["false"]
                binaries: [never-needed]
      `,
    });
    const r = await kapps(dir, ['validate', 'stacks.yaml', 'dev', '-i', 'apps:db'], { PATH: path.join(dir, 'bin') });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(text`
      * apps:db requires: postgres
          missing: apply_install step 'migrate' command './migrate.sh' not found
          missing: apply_install step 'migrate' binary 'jq' not found
          missing: apply_install step 'migrate' binary 'psql' not found
          missing: apply_install step 'create' command 'createdb' not found

      4 requirement(s) missing
    `);
    expect(r.code).toBe(1);
  });
});

describe('shared arguments', () => {
  it('every planning command takes <stack-file> <stack-name> [workspace-dir] and documents the default workspace', async () => {
    for (const command of ['generate', 'graph', 'vars', 'validate']) {
      const r = await kapps('.', [command, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`kapps ${command} <stack-file> <stack-name> [workspace-dir]`);
      expect(r.stdout).toMatch(
        /workspace-dir\s+Workspace directory \(default: \.kapps-workspace\/<stack-name> next to the stack\s+file\)/,
      );
    }
  });

  it('too few arguments is a usage error', async () => {
    const r = await kapps('.', ['generate', 'stacks.yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatchInlineSnapshot(`
      "kapps: Not enough non-option arguments: got 1, need at least 2
      Run \`kapps --help\` for usage.
      "
    `);
  });
});
