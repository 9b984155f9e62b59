/**
 * The fast YAML front-end must give exactly the tree the `yaml` package front-end gives (values, texts and
 * positions), or give up; it must never accept a document the `yaml` package rejects.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFast } from '../../../src/yaml/fast-parse.js';
import { parseWithYamlLib } from '../../../src/yaml/lib-parse.js';
import { ConfigError } from '../../../src/diagnostics/errors.js';
import type { YamlNode } from '../../../src/yaml/tree.js';

type Outcome = { tree: unknown } | { errors: unknown } | { gaveUp: true };

/** What a tree says: each node's kind, value, text and location (nodes keep offsets and make locations on demand). */
function plain(node: YamlNode | null): unknown {
  if (node === null) return null;
  const loc = node.loc;
  if (node.kind === 'seq') return { kind: 'seq', loc, items: node.items.map(plain) };
  if (node.kind === 'map') {
    return {
      kind: 'map',
      loc,
      entries: node.entries.map((e) => ({ key: plain(e.key), value: plain(e.value), merged: e.merged })),
    };
  }
  return { kind: 'scalar', value: node.value, text: node.text, loc, merge: node.merge === true };
}

function lib(text: string): Outcome {
  try {
    return { tree: plain(parseWithYamlLib(text, 'f.yaml')) };
  } catch (e) {
    if (e instanceof ConfigError) return { errors: e.diagnostics };
    throw e;
  }
}

function fast(text: string): Outcome {
  try {
    const tree = parseFast(text, 'f.yaml');
    return tree === undefined ? { gaveUp: true } : { tree: plain(tree) };
  } catch (e) {
    if (e instanceof ConfigError) return { errors: e.diagnostics };
    throw e;
  }
}

/** Fast agrees with lib, or gave up. Returns whether fast handled the text. */
function agree(text: string): boolean {
  const f = fast(text);
  if ('gaveUp' in f) return false;
  expect(f, JSON.stringify(text)).toEqual(lib(text));
  return true;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name.startsWith('.') || name === 'node_modules') return [];
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(name) ? [p] : [];
  });
}

const root = path.join(import.meta.dirname, '../../..');
const ownFixtures = yamlFiles(path.join(root, 'test/fixtures/config'));
/** Every other YAML file of the project (other fixtures, samples): real-world shapes, some of them templates. */
const otherYaml = [
  ...yamlFiles(path.join(root, 'test/fixtures')).filter((f) => !ownFixtures.includes(f)),
  ...yamlFiles(path.join(root, 'samples')),
  ...yamlFiles(path.join(root, 'kapps')),
];

const SNIPPETS = [
  'a: 1\nb: [1, "two", \'3\']\nc: {d: e, f: [g]}\n',
  'a:\n  b: 1 # c\n  c: |\n    x\n    y\n\n# comment\nd: # c\n- e\ne: &x [1, "q"]\nf: *x\n',
  "g:\n- a:\n  b: 2\n-\nh: 's' \n",
  'a:   # c\nb:\n  # c2\nc:  \n-  \n',
  '- \n-   # x\n-\n  # c\n- a:\n  b:   \n',
  'a: &x\n  b: 1\nc: [a , b ]\ne: {a: 1 , b: "x" }\n',
  'base: &b\n  x: 1\n  y: 2\nm:\n  <<: *b\n  y: 3\n',
  'm: {a: 1, <<: {a: 2}}\n',
  'a: |-\n  keep\n  lines\nb: >\n  folded\n  text\n\n  para\nc: >-\n  x\n',
  'a: |\n\n  leading\n\n  inner\n\n\nb: 1\n',
  '---\na: 1\n...\nb: [\n',
  '--- # start\n- 1\n- - 2\n  - 3\n- {a: b}\n',
  "a: \"esc \\t \\n \\u00e9 \\x41 \\\" \\\\\"\nb: 'it''s'\n",
  '"quoted key": 1\n\'single\': 2\n',
  'a: b: c\n',
  'a: 1\n b: 2\n',
  'a:\n  - 1\n  b: 2\n',
  'a: [1, 2\n',
  'a: {b: 1\n',
  'a: "unterminated\n',
  'a: 1\na: 2\n',
  'm:\n  y: 1\n  yes: 2\n',
  'a: *nope\n',
  'a: &x [*x]\n',
  '- a\nb: 1\n',
  'a: {{ .x }}\n',
  'a: @x\n',
  'a: - b\n',
  'a: b\n  c\n',
  '- a\n  - b\n',
  'a: |\n  x\n# c\n  y\n',
  'a: |\n    x\n  y\n',
  'a: |\n  x\n   \n  y\n',
  'a: >\n  x\n    more\n  y\n',
  'a: |+\n  x\n\n',
  'a: |2\n   x\n',
  'a: |\n  x',
  'hello\n',
  'hello\nworld\n',
  '[1, 2]\n',
  '? a\n: b\n',
  'a: !!str 5\n',
  '%YAML 1.1\n---\na: 1\n',
  'a:\tb\n',
  'a: b\r\nc: d\r\n',
  'k: [a, , b]\n',
  'k: [a, b,]\n',
  'k: {a}\n',
  'k: {a: 1, b}\n',
  'k: {"a":1}\n',
  'k: [a: 1]\n',
  'k: [a #c\n, b]\n',
  'k: a#b\nl: a #b\n',
  'k: -1\nl: -x\nm: :x\nn: ?x\n',
  'k: "a" b\n',
  'k: "a"# c\n',
  '-a: 1\n',
  'a  : b\n',
  'a: b:\n',
  '  a: 1\n  b: 2\n',
  'a:\n- b\n- c\nd: e\n',
  '- - - x\n    - y\n  - z\n',
  'x: &a 1\ny: *a\nz: &a 2\nw: *a\n',
  'x: *a\n',
  '&a a: 1\n',
  'a: &b *c\n',
  'a: &b\n',
  '*a : 1\n',
  'a: >\n\n  x\n',
  'a: |\n  \n  x\n',
  'a: |\n     \n  x\n',
  'a:\n  |\n  x\n',
  'a: |\n',
  'a: |\nb: 1\n',
  'a: [[1, 2], {b: [c]}, "d", *x]\n',
  'x: &x 1\na: [[1, 2], {b: [c]}, "d", *x]\n',
  '<<: {a: 1}\nb: 2\n',
  '"<<": {a: 1}\n',
  'a: "x"\n"b": \'y\'\n',
  '# only comment\n',
  '',
  '\n\n',
  '...\n',
  '---\n',
  'a: 1 #c\n# c\n\n',
  'key with spaces: value with spaces   \n',
  'url: http://example.com:8080/path\n',
  'time: 12:30:45\n',
  'list:\n  - name: x\n    command: y\n    args: --a=b c\n  - name: z\n',
  "a: b\n  - c\n  {x}\n  [y]\n  &z\n  *w\n  !v\n  |u\n  'q'\n  ? x\n  %x\n",
  'args:\n  --context={{ .x }}\n  delete\n\n  {{ .kapp.vars.namespace }}\nnext: 1\n',
  '- b\n  - c\n- d\n   e # f\n',
  'a: b\n  : x\n',
  'a: b\n  c: d\n',
  'a: b\n  c # d\n  e\n',
  'a: b\n  # c\n  d\n',
  'a: b\n\n\n  c\n',
  'plain\n  root\n---\nx\n',
  'a:\n  b\n  c\nd: e\n',
];

describe('fast YAML front-end', () => {
  it('parses every configuration fixture, exactly like the yaml package', () => {
    expect(ownFixtures.length).toBeGreaterThan(10);
    for (const file of ownFixtures) {
      expect(agree(readFileSync(file, 'utf8')), file).toBe(true);
    }
  });

  it("agrees with the yaml package on the project's other YAML files or gives up", () => {
    let handled = 0;
    for (const file of otherYaml) if (agree(readFileSync(file, 'utf8'))) handled++;
    expect(handled).toBeGreaterThan(otherYaml.length / 2);
  });

  it('agrees with the yaml package on tricky snippets or gives up', () => {
    let handled = 0;
    for (const text of SNIPPETS) if (agree(text)) handled++;
    expect(handled).toBeGreaterThan(40);
  });

  it('never accepts a document the yaml package rejects (random documents)', () => {
    const fragment = fc.constantFrom(
      'a:',
      'b: 1',
      'c: x y',
      '- ',
      '-',
      '- d',
      '- e: 1',
      '  ',
      '# c',
      'f: [1, 2]',
      'g: {h: i}',
      'j: "q"',
      "k: 'q'",
      'l: |',
      'm: >-',
      'n: &an',
      'o: *an',
      '<<: *an',
      'p: a: b',
      'q: #',
      'r: "open',
      's: [1,',
      'text',
      '---',
      't: -',
      'u: x # y',
      'v: x#y',
      '"w": 1',
      'y: yes',
      '  continued text',
      '  - nested',
      '    deeper: 1',
      '  |',
      '  >-',
      '      block body',
      'z: "a\\tb"',
      "w: 'it''s'",
      '- - x',
      '- [a, {b: c}]',
      'k: {a: [1, 2], b: *an}',
      '...',
      'x: 0x1F',
      '? q',
    );
    const line = fc.tuple(fc.integer({ min: 0, max: 6 }), fragment).map(([n, f]) => ' '.repeat(n) + f);
    const doc = fc.array(line, { maxLength: 8 }).map((lines) => lines.join('\n') + '\n');
    fc.assert(
      fc.property(doc, (text) => {
        agree(text);
      }),
      { numRuns: 3000 },
    );
  });

  it('parses valid documents of every supported shape exactly like the yaml package', () => {
    const scalar = fc.constantFrom(
      'a',
      'b c',
      'yes',
      '~',
      '0x10',
      '1.5',
      '-x',
      'a:b',
      'a#b',
      "'q'",
      '"d\\te"',
      '*an',
      '{}',
      '[]',
    );
    type Tree = string | { seq: Tree[] } | { map: [string, Tree][] };
    const tree: fc.Arbitrary<Tree> = fc.letrec<{ t: Tree }>((tie) => ({
      t: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        scalar,
        fc.array(tie('t'), { minLength: 1, maxLength: 3 }).map((seq) => ({ seq })),
        fc
          .array(fc.tuple(fc.constantFrom('k1', 'k2', 'key three', '"q k"', '1', 'on'), tie('t')), {
            minLength: 1,
            maxLength: 3,
          })
          .map((map) => ({ map })),
      ),
    })).t;
    // Block style with random choices: indentless lists, compact maps in lists, multi-line plain, block scalars.
    const render = (t: Tree, indent: number, choice: number): string => {
      const pad = ' '.repeat(indent);
      if (typeof t === 'string') {
        if (choice % 5 === 0 && /^[a-z ]+$/.test(t)) return ` |\n${pad}  ${t}\n${pad}  more\n`;
        if (choice % 7 === 0 && /^[a-z ]+$/.test(t)) return ` ${t}\n${pad}  continued\n`;
        return ` ${t}\n`;
      }
      if ('map' in t) {
        const keys = new Set<string>();
        let out = '\n';
        for (const [k, v] of t.map) {
          if (keys.has(k)) continue;
          keys.add(k);
          out += `${pad}${k}:${render(v, indent + 2, choice + k.length)}`;
        }
        return out;
      }
      const seqIndent = choice % 3 === 0 ? Math.max(indent - 2, 0) : indent;
      const spad = ' '.repeat(seqIndent);
      return (
        '\n' +
        t.seq
          .map((v, i) => {
            const body = render(v, seqIndent + 2, choice + i);
            // A map may start on the `-` line (compact) or on the next line.
            return typeof v !== 'string' && 'map' in v && choice % 2 === 0
              ? `${spad}- ${body.slice(seqIndent + 3)}`
              : `${spad}-${body}`;
          })
          .join('')
      );
    };
    let handled = 0;
    let runs = 0;
    fc.assert(
      fc.property(tree, fc.nat(100), (t, choice) => {
        runs++;
        const text = `an: &an [x]\nroot:${render(t, 2, choice)}`;
        if (agree(text)) handled++;
      }),
      { numRuns: 1500 },
    );
    expect(handled / runs).toBeGreaterThan(0.5);
  });
});
