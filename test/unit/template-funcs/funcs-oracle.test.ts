/**
 * Renders every case of test/fixtures/go-template/funcs-cases.json with kapps and compares with the answers of
 * the Go reference renderer (text/template + sprig v3.2.3, Go 1.19) in funcs-expected.json: outputs and error
 * texts must be identical, except for the documented deviations listed below (docs/template-functions.md).
 * build-cases.mjs explains how to regenerate both files.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYamlValue } from '../../../src/yaml/read.js';
import { defaultFuncs } from '../../../src/template/funcs/index.js';
import { renderTemplate, TemplateError } from '../../../src/template/index.js';
import { parseLosslessJson } from '../../../src/template/lossless-json.js';
import type { GoValue } from '../../../src/go-value/value.js';
import { GoIfaceMap, isGoMap, newGoMap } from '../../../src/go-value/value.js';
// A plain JavaScript helper, shared with the command line that prepares the reference renderer's run.
import { createFixtureTree } from './fixture-tree.mjs';

const FIXTURES_TOKEN = '@FIXTURES@';
const fixturesDir = new URL('../../fixtures/go-template/', import.meta.url);

interface Case {
  id: string;
  template: string;
  data: GoValue;
  yaml?: string;
  env: Record<string, string>;
  strict: boolean;
}

type Result = { output: string } | { error: string };

function field(v: GoValue, name: string): GoValue | undefined {
  return isGoMap(v) && Object.prototype.hasOwnProperty.call(v, name) ? v[name] : undefined;
}

function readCases(): Case[] {
  const doc = parseLosslessJson(readFileSync(new URL('funcs-cases.json', fixturesDir), 'utf8'));
  const cases = field(doc, 'cases');
  if (!Array.isArray(cases)) throw new Error('funcs-cases.json has no cases');
  return cases.map((c) => {
    const env: Record<string, string> = {};
    const envField = field(c, 'env');
    if (isGoMap(envField)) for (const [k, v] of Object.entries(envField)) if (typeof v === 'string') env[k] = v;
    const yaml = field(c, 'yaml');
    const id = field(c, 'id');
    const template = field(c, 'template');
    if (typeof id !== 'string' || typeof template !== 'string') throw new Error('a case without id or template');
    return {
      id,
      template,
      data: field(c, 'data') ?? null,
      yaml: typeof yaml === 'string' ? yaml : undefined,
      env,
      strict: field(c, 'strict') === true,
    };
  });
}

function readExpected(): Map<string, Result> {
  const doc = JSON.parse(readFileSync(new URL('funcs-expected.json', fixturesDir), 'utf8')) as {
    results: ({ id: string; output: string } | { id: string; error: string })[];
  };
  return new Map(doc.results.map((r) => [r.id, 'output' in r ? { output: r.output } : { error: r.error }]));
}

/** Replace the fixtures token in every string of the data (keys too), as the reference renderer does. */
function withFixtures(v: GoValue, fix: (s: string) => string): GoValue {
  if (typeof v === 'string') return fix(v);
  if (Array.isArray(v)) return v.map((x) => withFixtures(x, fix));
  if (v instanceof GoIfaceMap) {
    const m = new GoIfaceMap();
    for (const [k, x] of v) m.set(typeof k === 'string' ? fix(k) : k, withFixtures(x, fix));
    return m;
  }
  if (isGoMap(v)) return newGoMap(Object.entries(v).map(([k, x]) => [fix(k), withFixtures(x, fix)]));
  return v;
}

/**
 * Deviations from Go that kapps accepts (see docs/template-functions.md): what kapps renders instead.
 * - int64: kapps represents every Go integer as one type (int), so sprig's int64 results print `int` with %T and
 *   are accepted where Go wants an `int`.
 * - bytes: a string cut inside a multi-byte character holds U+FFFD (3 bytes) where Go keeps the stray byte (1).
 * - unsupported functions are not defined, so a template naming one fails to parse.
 */
const DEVIATIONS: Record<string, Result> = {
  'conv.types': { output: 'int int float64 int int' },
  'repeat.int64-arg': { output: 'xx' },
  'substr.bytes': { output: 'é|é|\ufffd|3' },
  ...Object.fromEntries(
    ['now', 'date', 'toDate', 'duration', 'bcrypt', 'genCA', 'getHostByName', 'encryptAES', 'unixEpoch'].map((n) => [
      `unsupported.${n}`,
      { error: `template: gotpl:1: function "${n}" not defined` },
    ]),
  ),
};

let root = '';

function render(c: Case): Result {
  const fix = (s: string): string => s.replaceAll(FIXTURES_TOKEN, root);
  const unfix = (s: string): string => s.replaceAll(root, FIXTURES_TOKEN);
  const data = c.yaml !== undefined ? parseYamlValue(fix(c.yaml), { goMaps: true }) : withFixtures(c.data, fix);
  try {
    const output = renderTemplate(fix(c.template), data, {
      funcs: defaultFuncs(),
      strict: c.strict,
      ctx: { getEnv: (name) => c.env[name] },
    });
    return { output: unfix(output) };
  } catch (e) {
    if (e instanceof TemplateError) return { error: unfix(e.message) };
    throw e;
  }
}

const cases = readCases();
const expected = readExpected();

beforeAll(() => {
  // Digits only after the prefix: `findFiles` matches whole paths, so a random letter (a `b`) would match too.
  root = join(tmpdir(), `kapps-funcs-${process.pid}-${String(Date.now())}`);
  mkdirSync(root);
  createFixtureTree(root);
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('template functions against the Go reference renderer', () => {
  it('has an expected result for every case and a case for every expected result', () => {
    expect(cases.length).toBeGreaterThan(400);
    expect(new Set(cases.map((c) => c.id))).toEqual(new Set(expected.keys()));
  });

  it.each(cases.filter((c) => !(c.id in DEVIATIONS)).map((c) => [c.id, c] as const))('%s', (_id, c) => {
    expect(render(c)).toEqual(expected.get(c.id));
  });

  it.each(Object.entries(DEVIATIONS))('%s renders the documented deviation', (id, result) => {
    const c = cases.find((k) => k.id === id);
    expect(c).toBeDefined();
    if (!c) throw new Error(`no case ${id} for the deviation`);
    expect(render(c)).toEqual(result);
    // The deviation is real: Go renders something else.
    expect(expected.get(id)).not.toEqual(result);
  });
});
