/**
 * Nesting depth of YAML (and JSON) documents: beyond MAX_YAML_DEPTH levels of maps and lists, aliases expanded,
 * every reader refuses the document with a located ConfigError instead of exhausting the call stack.
 */
import { describe, expect, it } from 'vitest';
import { parseOutputFile } from '../../../src/config/output-file.js';
import { parseYamlTree, parseYamlValue } from '../../../src/yaml/read.js';
import { MAX_YAML_DEPTH } from '../../../src/yaml/tree.js';
import { ConfigError } from '../../../src/diagnostics/errors.js';
import { defaultFuncs } from '../../../src/template/funcs/index.js';
import { renderTemplate } from '../../../src/template/index.js';

const blockMaps = (depth: number): string => {
  let s = '';
  for (let i = 0; i < depth; i++) s += `${' '.repeat(i)}k:\n`;
  return s + `${' '.repeat(depth)}v\n`;
};
const blockSeqs = (depth: number): string => `${'- '.repeat(depth)}x\n`;
const flowSeqs = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}\n`;
const flowMaps = (depth: number): string => `${'{a: '.repeat(depth)}1${'}'.repeat(depth)}\n`;

/** The located error a document gives, or null when it parses. */
function depthError(text: string, parser: 'auto' | 'lib'): { message: string; line: number } | null {
  try {
    parseYamlTree(text, { file: 'deep.yaml', parser });
    return null;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const d = e.diagnostics[0];
    return { message: d?.message ?? '', line: d?.location?.line ?? -1 };
  }
}

describe.each(['auto', 'lib'] as const)('YAML nesting (%s parser)', (parser) => {
  it.each([
    ['block maps', blockMaps, 3000, MAX_YAML_DEPTH + 1],
    ['block sequences', blockSeqs, 3000, 1],
    ['flow sequences', flowSeqs, 10_000, 1],
    ['flow maps', flowMaps, 5000, 1],
  ])('%s: refused beyond the limit, at the line of the collection too deep', (_n, make, deep, line) => {
    const message = `YAML nesting deeper than ${MAX_YAML_DEPTH} levels of maps and lists`;
    expect(depthError(make(deep), parser)?.message).toBe(message);
    expect(depthError(make(MAX_YAML_DEPTH + 1), parser)).toEqual({ message, line });
    expect(depthError(make(MAX_YAML_DEPTH), parser)).toBeNull();
  });

  it('counts levels through aliases', () => {
    const levels = 40;
    const text = Array.from({ length: 10 }, (_, i) => {
      const inner = i === 0 ? 'x' : `*a${i - 1}`;
      return `a${i}: &a${i} ${'['.repeat(levels)}${inner}${']'.repeat(levels)}`;
    }).join('\n');
    expect(depthError(`${text}\n`, parser)?.message).toContain('YAML nesting deeper than');
  });
});

describe('other readers', () => {
  it('vars-like values: parseYamlValue refuses too deep a document', () => {
    expect(() => parseYamlValue(flowSeqs(100_000), { file: 'vars.yaml' })).toThrow(ConfigError);
  });

  it('JSON output files: nesting beyond the limit is a located error', () => {
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    expect(() => parseOutputFile(deep, 'json', 'out.json')).toThrow(
      `JSON nesting deeper than ${MAX_YAML_DEPTH} levels of objects and arrays`,
    );
    expect(parseOutputFile(`${'['.repeat(100)}${']'.repeat(100)}`, 'json', 'out.json')).toHaveLength(1);
  });

  it('template fromJson: deep JSON is an error, not a stack overflow', () => {
    const render = (fn: string, j: string) =>
      renderTemplate(
        `{{ $x := ${fn} .j }}ok`,
        { j },
        {
          funcs: defaultFuncs(),
          ctx: { getEnv: () => undefined },
        },
      );
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    expect(() => render('mustFromJson', deep)).toThrow(
      /error calling mustFromJson: JSON nesting deeper than 1000 levels/,
    );
    // sprig's fromJson returns an empty value for JSON it cannot decode.
    expect(render('fromJson', deep)).toBe('ok');
    expect(render('mustFromJson', `${'['.repeat(500)}${']'.repeat(500)}`)).toBe('ok');
  });
});
