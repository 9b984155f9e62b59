/**
 * Kapp output files (`outputs[].path`), parsed by their declared format.
 */
import { error as errorDiag, type SourceLocation } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { newGoMap, type GoValue } from '../go-value/value.js';
import { topLevelMap } from './vars-file.js';
import { parseYamlTree } from '../yaml/read.js';
import { MAX_YAML_DEPTH } from '../yaml/tree.js';

/** JSON decoded as Go's encoding/json into interface{}: numbers are float64, objects string-keyed maps. */
function fromJson(v: unknown, file: string, depth = 1): GoValue {
  if (v === null || typeof v !== 'object') return v as GoValue;
  // The same nesting limit as YAML documents: deeper values would exhaust the stack of whatever reads them next.
  if (depth > MAX_YAML_DEPTH) {
    throw new ConfigError([
      errorDiag(`JSON nesting deeper than ${MAX_YAML_DEPTH} levels of objects and arrays`, {
        file,
        line: 1,
        column: 1,
      }),
    ]);
  }
  if (Array.isArray(v)) return v.map((x) => fromJson(x, file, depth + 1));
  const m = newGoMap();
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) m[k] = fromJson(val, file, depth + 1);
  return m;
}

function positionOf(text: string, offset: number, file: string): SourceLocation {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return { file, line, column, endLine: line, endColumn: column + 1 };
}

function parseJson(text: string, file: string): GoValue {
  try {
    return fromJson(JSON.parse(text), file);
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    const message = e instanceof Error ? e.message : String(e);
    const at = /at position (\d+)/.exec(message);
    const loc = at ? positionOf(text, Number(at[1]), file) : { file, line: 1, column: 1 };
    const clean = message.replace(/ in JSON at position \d+.*$/, '').replace(/, ".*" is not valid JSON$/s, '');
    throw new ConfigError([errorDiag(`invalid JSON: ${clean}`, loc)]);
  }
}

/**
 * Parse the content of an output file. `format` (case-insensitive): `json` — any JSON value, numbers as floats;
 * `yaml` — strict YAML whose top level must be a map (empty: an empty map); `text` — the content as it is.
 * Throws `ConfigError` for an unknown format or content that does not parse.
 */
export function parseOutputFile(text: string, format: string, file: string): GoValue {
  switch (format.toLowerCase()) {
    case 'json':
      return parseJson(text, file);
    case 'yaml':
      return topLevelMap(parseYamlTree(text, { file }), 'a YAML output');
    case 'text':
      return text;
    default:
      throw new ConfigError([
        errorDiag(`unsupported output format \`${format}\` for \`${file}\``, undefined, {
          hint: 'use json, yaml or text',
        }),
      ]);
  }
}
