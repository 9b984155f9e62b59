/**
 * Seeded fuzzing of the configuration readers, on the built CLI: a small valid project (stack file, two manifests,
 * two kapp descriptors, provider and kapp vars files) is written with several of its files mutated — a value
 * replaced by a hostile or odd one, a key removed, renamed or added, a map turned into a list, the YAML text cut,
 * indented or salted with anchors, tags and brackets — and a command that runs nothing (`validate`, `generate`,
 * `vars`, `install -n`) must end with exit code 0, 1 or 2 and print no stack trace.
 *
 * Each case (one project, one CLI process) mutates 1 to 4 of its 7 YAML files. KAPPS_FUZZ_CASES sets the number of
 * cases (default 40, about 100 mutated files), KAPPS_FUZZ_SEED the seed (printed on failure with the case), KAPPS_FUZZ_CASE runs
 * one case alone.
 */
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { cleanupProjects, fixtureProject } from '../support/project.js';
import { seededRandom } from '../fixtures/release/harness.js';

const CASES = Number(process.env.KAPPS_FUZZ_CASES ?? 40);
const SEED = Number(process.env.KAPPS_FUZZ_SEED ?? 20_261_125);
const ONLY = process.env.KAPPS_FUZZ_CASE === undefined ? undefined : Number(process.env.KAPPS_FUZZ_CASE);
/** How many cases the run has (for its time limit). */
const indexesCount = (): number => (ONLY !== undefined ? 1 : CASES);
const COMMANDS: readonly (readonly string[])[] = [['validate'], ['generate'], ['vars'], ['install', '-n']];

afterAll(cleanupProjects);

type Random = () => number;

const pick = <T>(r: Random, items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;

/** The valid project: file path → content. */
function baseProject(): Record<string, unknown> {
  const kapp = (tag: string) => ({
    requires: [],
    vars: { replicas: 2, image: 'nginx:{{ .vars.region }}', list: [1, 'two', { three: 3 }] },
    run_units: {
      main: {
        working_dir: '.',
        env_vars: { REGION: '{{ .vars.region }}' },
        binaries: ['kapps-fake'],
        conditions: ['{{ eq .vars.region "eu" }}'],
        plan_install: [{ name: 'plan', command: 'kapps-fake', args: `--tag plan-${tag}` }],
        apply_install: [
          {
            name: 'apply',
            command: 'kapps-fake',
            args: `--tag ${tag} {{ .kapp.vars.replicas }}`,
            timeout: 30,
            env_vars: { A: 'b' },
          },
        ],
        apply_delete: [{ name: 'delete', command: 'kapps-fake', args: `--tag del-${tag}` }],
        output: [{ name: 'out', command: 'kapps-fake', args: '--write-file out.json {}', load_outputs: true }],
      },
    },
    outputs: [{ id: 'out', path: 'out.json', format: 'json', sensitive: false }],
    // (no templates: a dry run does not fill the workspace, so `install -n` cannot find a template's source)
    post_install_actions: [{ cluster_update: { params: [{ a: 1 }] } }],
  });
  return {
    'stacks.yaml': {
      dev: {
        provider: 'local',
        cluster: 'c',
        profile: 'p',
        account: 'acc',
        region: 'eu',
        vars: { region: 'eu', count: 3, nested: { a: [1, 2] } },
        provider_vars_dirs: ['providers'],
        kapp_vars_dirs: ['kapp-vars'],
        manifests: [
          { uri: 'manifests/web.yaml', versions: { 'api/api': 'v1' }, overrides: { api: { vars: { x: 1 } } } },
          { uri: 'manifests/data.yaml', id: 'data' },
        ],
        defaults: { vars: { namespace: 'dev' } },
      },
    },
    'manifests/web.yaml': {
      defaults: { vars: { tier: 'front' } },
      kapps: [
        {
          id: 'api',
          depends_on: [{ id: 'data:db' }],
          sources: [{ id: 'api', uri: '../kapps/api', options: { branch: 'main' } }],
          vars: { port: 8080 },
          conditions: ['{{ ne .vars.count 0 }}'],
        },
      ],
    },
    'manifests/data.yaml': {
      kapps: [{ id: 'db', sources: [{ uri: '../kapps/db' }] }],
    },
    'kapps/api/sugarkube.yaml': kapp('api'),
    'kapps/db/sugarkube.yaml': kapp('db'),
    'kapps/api/conf.tpl': 'region={{ .vars.region }}\n',
    'kapps/db/conf.tpl': 'db\n',
    'providers/values.yaml': { region: 'eu', tags: { team: 'a' } },
    'kapp-vars/api.yaml': { port: 9090, image: '{{ .vars.namespace }}' },
    'kapp-vars/values.yaml': { common: true },
  };
}

const FIELDS = [
  'kapps', 'id', 'uri', 'sources', 'options', 'branch', 'depends_on', 'run_units', 'outputs', 'templates', 'vars',
  'versions', 'overrides', 'manifests', 'defaults', 'conditions', 'command', 'args', 'env_vars', 'name', 'path',
  'format', 'sensitive', 'dest', 'source', 'requires', 'timeout', 'working_dir', 'binaries', 'apply_install',
  'plan_install', 'apply_delete', 'output', 'load_outputs', 'provider', 'cluster', 'provider_vars_dirs',
  'kapp_vars_dirs', 'ignore_global_defaults', 'metadata', 'post_install_actions', 'pre_delete_actions', 'params',
  '<<', '', ' ', '0', '-1', 'null', 'true',
]; // prettier-ignore

const VALUES: readonly unknown[] = [
  '', ' ', 'x', '-x', '--upload-pack=touch /tmp/x', '../../../../tmp/x', '/etc/passwd', '.', '..', '{{', '}}',
  '{{ .nope }}', '{{ .vars.region }}', '{{ .vars }}', '{{ range .vars }}{{ . }}{{ end }}', '{{ template "x" }}',
  '{{ index .vars "a" 5 }}', '{{ .vars.nested.a | len }}', '{{ printf "%v" . }}', '{{ repeat 3 "a" }}',
  '{{ fail "boom" }}', '{{ include "x" . }}', '{{ div 1 0 }}', '{{ toYaml .vars }}', '$(touch /tmp/x)', '~', 'a: b',
  '- a', 'yes', 'no', 'on', '0x1F', '0o17', '.inf', '-.inf', '.nan', '1e309', '2026-01-01', '\u0000', '\t', 'ä€😀',
  'a'.repeat(3000), 'repo.git', 'repo.git//x#--y', 'file://', 'ext::sh -c x', 'x:y', 'web:api', 'data:db', 'api/api',
  0, -1, 1, 3.5, 2 ** 53 + 2, -(2 ** 63), Number.MAX_VALUE, true, false, null, [], {}, [[[]]], { a: { b: { c: {} } } },
  ['{{ .x }}', 1, null], { id: 'x' }, { uri: '../kapps/db' }, [{ id: 'api' }], [{ id: 'data:db' }], [{ id: 'nope' }],
]; // prettier-ignore

/** Every path (list of keys/indexes) to a node of `v`, the root included. */
function paths(v: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((item, i) => paths(item, [...at, i], out));
  else if (v !== null && typeof v === 'object') for (const [k, item] of Object.entries(v)) paths(item, [...at, k], out);
  return out;
}

function parentOf(root: unknown, p: readonly (string | number)[]): Record<string | number, unknown> | undefined {
  let cur = root;
  for (const k of p.slice(0, -1)) cur = (cur as Record<string | number, unknown>)[k];
  return cur !== null && typeof cur === 'object' ? (cur as Record<string | number, unknown>) : undefined;
}

/** One structural mutation of a parsed document (in place; returns the new root). */
function mutateTree(r: Random, root: unknown): unknown {
  const all = paths(root);
  const p = pick(r, all);
  const value = structuredClone(pick(r, VALUES));
  if (p.length === 0) return r() < 0.5 ? value : [root];
  const parent = parentOf(root, p);
  const key = p[p.length - 1] as string | number;
  if (!parent) return root;
  const current = parent[key];
  switch (Math.floor(r() * 7)) {
    case 0: // replace
      parent[key] = value;
      break;
    case 1: // remove
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
      break;
    case 2: // rename the key
      if (!Array.isArray(parent)) {
        delete parent[key];
        parent[pick(r, FIELDS)] = current;
      }
      break;
    case 3: // add a key or item
      if (Array.isArray(current)) current.push(value);
      else if (current !== null && typeof current === 'object')
        (current as Record<string, unknown>)[pick(r, FIELDS)] = value;
      else parent[key] = [current, value];
      break;
    case 4: // change the shape: map ↔ list, scalar → map
      if (Array.isArray(current)) parent[key] = Object.fromEntries(current.map((v, i) => [String(i), v]));
      else if (current !== null && typeof current === 'object') parent[key] = Object.values(current);
      else parent[key] = { [pick(r, FIELDS)]: current };
      break;
    case 5: // copy another subtree here
      {
        const other = pick(r, all);
        let src: unknown = root;
        for (const k of other) src = (src as Record<string | number, unknown>)[k];
        parent[key] = structuredClone(src);
      }
      break;
    default:
      {
        // nest deeply
        let deep: unknown = current;
        for (let i = 0; i < 1 + Math.floor(r() * 60); i++) deep = r() < 0.5 ? [deep] : { [pick(r, FIELDS)]: deep };
        parent[key] = deep;
      }
      break;
  }
  return root;
}

const TOKENS = [
  ':', ': ', '-', '- ', '{', '}', '[', ']', ',', '&a ', '*a', '<<: *a\n', '!!int ', '!!binary ', '!foo ', '? ', '|',
  '>-', '#', '"', "'", '\t', '\n', '\n  ', '%YAML 1.2\n', '---\n', '...\n', '@', '`', '\\', '\u0000', '\ufeff',
  '{{', '}}', 'x: &a [*a]\n', 'a: !!str\n', '"\\x', '0x', '~\n',
]; // prettier-ignore

/** One change to the YAML text. */
function mutateText(r: Random, text: string): string {
  const at = Math.floor(r() * (text.length + 1));
  const lines = text.split('\n');
  const line = Math.floor(r() * lines.length);
  switch (Math.floor(r() * 6)) {
    case 0:
      return text.slice(0, at);
    case 1:
      return text.slice(0, at) + pick(r, TOKENS) + text.slice(at);
    case 2:
      return text.slice(0, at) + text.slice(at + 1 + Math.floor(r() * 8));
    case 3:
      lines.splice(line, 0, lines[line] ?? '');
      return lines.join('\n');
    case 4:
      lines[line] = r() < 0.5 ? `  ${lines[line] ?? ''}` : (lines[line] ?? '').replace(/^ {1,2}/, '');
      return lines.join('\n');
    default:
      return text + pick(r, TOKENS) + pick(r, TOKENS);
  }
}

interface Case {
  readonly index: number;
  readonly dir: string;
  readonly command: readonly string[];
  /** The mutated files and what was done to them. */
  readonly mutated: string[];
}

/** Write case `index`: the base project with 1–4 of its YAML files mutated (none for a negative index). */
function writeCase(index: number): Case {
  const r = seededRandom(SEED * 1000 + index);
  const files = baseProject();
  const yamlFiles = Object.keys(files).filter((f) => f.endsWith('.yaml'));
  const chosen = new Set<string>();
  const count = index < 0 ? 0 : 1 + Math.floor(r() * 4);
  // The stack file less often: an error there hides the others.
  while (chosen.size < count) {
    const f = pick(r, yamlFiles);
    if (f !== 'stacks.yaml' || r() < 0.4) chosen.add(f);
  }
  const mutated: string[] = [];
  const written: Record<string, string> = {};
  for (const [rel, content] of Object.entries(files)) {
    let text: string;
    if (chosen.has(rel)) {
      let tree: unknown = structuredClone(content);
      const edits = 1 + Math.floor(r() * 2);
      for (let i = 0; i < edits; i++) tree = mutateTree(r, tree);
      text = stringify(tree, { lineWidth: 0, aliasDuplicateObjects: false });
      if (r() < 0.25) text = mutateText(r, text);
      mutated.push(`--- ${rel}\n${text.length > 2000 ? `${text.slice(0, 2000)}…` : text}`);
    } else text = typeof content === 'string' ? content : stringify(content, { lineWidth: 0 });
    written[rel] = text;
  }
  const { dir } = fixtureProject({ stacks: null, files: written });
  return { index, dir, command: COMMANDS[index % COMMANDS.length] ?? ['validate'], mutated };
}

const STACK_TRACE = /^ {4}at |\n {4}at |TypeError|RangeError|ReferenceError|SyntaxError: |Maximum call stack/;

describe('the configuration readers under seeded fuzzing', () => {
  it('start from a valid project: every command succeeds on it unmutated', async () => {
    const c = writeCase(-1);
    for (const command of COMMANDS) {
      const r = await runCli([...command, 'stacks.yaml', 'dev'], {
        cwd: c.dir,
        env: { HOME: path.dirname(c.dir), KAPPS_HOME: path.join(path.dirname(c.dir), 'home') },
        killAfterMs: 30_000,
      });
      expect(r.code, `kapps ${command.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
    }
  });

  it(
    `end every command with 0, 1 or 2 and no stack trace (${ONLY !== undefined ? `case ${ONLY}` : `${CASES} cases`}, seed ${SEED})`,
    { timeout: 120_000 + indexesCount() * 15_000 },
    async () => {
      const indexes = ONLY !== undefined ? [ONLY] : Array.from({ length: CASES }, (_, i) => i);
      const failures: string[] = [];
      const codes: Record<string, number> = {};
      let next = 0;
      const worker = async () => {
        while (next < indexes.length) {
          const c = writeCase(indexes[next++] as number);
          const r = await runCli([...c.command, 'stacks.yaml', 'dev'], {
            cwd: c.dir,
            env: { HOME: path.dirname(c.dir), KAPPS_HOME: path.join(path.dirname(c.dir), 'home') },
            killAfterMs: 30_000,
          });
          const out = r.stdout + r.stderr;
          codes[String(r.code)] = (codes[String(r.code)] ?? 0) + 1;
          if (r.code === null || ![0, 1, 2].includes(r.code) || STACK_TRACE.test(out)) {
            failures.push(
              `case ${c.index} (KAPPS_FUZZ_SEED=${SEED} KAPPS_FUZZ_CASE=${c.index}): kapps ${c.command.join(' ')} ` +
                `exited ${String(r.code)}${r.signal ? ` (${r.signal})` : ''}\n${out.slice(0, 3000)}\n${c.mutated.join('\n')}`,
            );
          }
        }
      };
      // Two at a time: the machine running the suite may have no more cores to spare.
      await Promise.all([worker(), worker()]);
      console.log(`config fuzz, seed ${SEED}, ${indexes.length} cases: exit codes ${JSON.stringify(codes)}`);
      expect(failures, `seed ${SEED}: ${failures.length} failing case(s)\n\n${failures.join('\n\n')}`).toEqual([]);
    },
  );
});
