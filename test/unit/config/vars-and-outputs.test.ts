/** Vars files and kapp output files. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { locationOf } from '../../../src/config/locations.js';
import { parseOutputFile } from '../../../src/config/output-file.js';
import { loadVarsFile } from '../../../src/config/vars-file.js';
import type { GoMap } from '../../../src/go-value/value.js';
import { lines, printedError } from './helpers.js';

function write(text: string, name = 'values.yaml'): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'kapps-vars-')), name);
  writeFileSync(file, text);
  return file;
}

describe('loadVarsFile', () => {
  it('reads any map, with YAML 1.1 values', () => {
    const file = write(
      'kube_context: minikube\nprovisioner:\n  params:\n    start: {memory: 4096, cpus: 4, disk: 120g}\non: yes\n',
    );
    expect(loadVarsFile(file)).toEqual({
      kube_context: 'minikube',
      provisioner: { params: { start: { memory: 4096n, cpus: 4n, disk: '120g' } } },
      on: true,
    });
  });

  it('stringifies nested non-string keys as Go prints them (convert_test)', () => {
    const vars = loadVarsFile(write('m:\n  3: a\n  1.2: b\n  true: c\n'));
    expect(Object.keys(vars.m as GoMap).sort()).toEqual(['1.2', '3', 'true']);
  });

  it('reads an empty file as an empty map', () => {
    expect(loadVarsFile(write(''))).toEqual({});
  });

  it('records where each variable was written', () => {
    const vars = loadVarsFile(write('a: 1\nb:\n  c: x\n'));
    expect(locationOf(vars, 'b')).toMatchObject({ line: 3, column: 3 });
    expect(locationOf(vars.b as GoMap, 'c')).toMatchObject({ line: 3, column: 6 });
  });

  it('rejects a top level that is not a map', () => {
    const text = '- a\n';
    const file = write(text);
    expect(
      printedError(
        () => loadVarsFile(file),
        () => text,
      ),
    ).toBe(
      lines(
        `${file}:1:1: error: a vars file must contain a map at the top level, got a list`,
        '  |',
        '1 | - a',
        '  | ^^^',
      ),
    );
  });

  it('names a missing file', () => {
    expect(printedError(() => loadVarsFile('/nowhere/values.yaml'))).toBe(
      'error: vars file `/nowhere/values.yaml` does not exist',
    );
  });
});

describe('parseOutputFile', () => {
  it('decodes JSON as Go does: numbers are floats, objects string-keyed maps', () => {
    const v = parseOutputFile('{"endpoint": {"value": "db:5432"}, "port": 5432, "ids": [1, 2.5]}', 'json', 'o.json');
    expect(v).toEqual({ endpoint: { value: 'db:5432' }, port: 5432, ids: [1, 2.5] });
    expect(typeof (v as GoMap).port).toBe('number');
    expect(Object.getPrototypeOf(v)).toBeNull();
  });

  it('accepts any JSON value and an upper-case format', () => {
    expect(parseOutputFile('[1, "a", null, true]', 'JSON', 'o.json')).toEqual([1, 'a', null, true]);
  });

  it('reports invalid JSON with its position', () => {
    const text = '{"a": 1,\n "b" 2}';
    expect(
      printedError(
        () => parseOutputFile(text, 'json', 'o.json'),
        () => text,
      ),
    ).toBe(lines('o.json:2:6: error: invalid JSON: Unexpected number', '  |', '2 |  "b" 2}', '  |      ^'));
  });

  it('decodes YAML with a map at the top level', () => {
    expect(parseOutputFile('clusterIssuer:\n  name: letsencrypt\n  ready: yes\n', 'yaml', 'o.yaml')).toEqual({
      clusterIssuer: { name: 'letsencrypt', ready: true },
    });
    expect(parseOutputFile('', 'yaml', 'o.yaml')).toEqual({});
  });

  it('rejects YAML whose top level is not a map (Sugarkube crashed)', () => {
    const text = '- a\n';
    expect(
      printedError(
        () => parseOutputFile(text, 'yaml', 'o.yaml'),
        () => text,
      ),
    ).toBe(
      lines(
        'o.yaml:1:1: error: a YAML output must contain a map at the top level, got a list',
        '  |',
        '1 | - a',
        '  | ^^^',
      ),
    );
  });

  it('rejects duplicate keys in YAML outputs', () => {
    expect(() => parseOutputFile('a: 1\na: 2\n', 'yaml', 'o.yaml')).toThrow('duplicate key `a`');
  });

  it('returns text as it is, trailing newline included', () => {
    expect(parseOutputFile('line\n', 'text', 'o.txt')).toBe('line\n');
  });

  it('rejects an unknown format', () => {
    expect(printedError(() => parseOutputFile('x', 'xml', 'o.xml'))).toBe(
      lines('error: unsupported output format `xml` for `o.xml`', '  hint: use json, yaml or text'),
    );
  });
});
