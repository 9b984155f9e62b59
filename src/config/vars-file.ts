/**
 * Vars files (provider and kapp vars): any YAML map. Keys of the top level keep their text; nested keys are
 * strings as Go's `%v` prints them (`{1: a}` → `"1"`); values keep their YAML 1.1 types.
 */
import { error as errorDiag } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { newGoMap, type GoMap } from '../go-value/value.js';
import { readConfigText } from './read-file.js';
import { nodeKindName, parseYamlTree, yamlToGoValue, type YamlNode } from '../yaml/read.js';

/** The map at the top of a parsed document; empty for an empty or null document. */
export function topLevelMap(root: YamlNode | null, what: string): GoMap {
  if (root === null || (root.kind === 'scalar' && root.value === null)) return newGoMap();
  if (root.kind !== 'map') {
    throw new ConfigError([
      errorDiag(`${what} must contain a map at the top level, got ${nodeKindName(root)}`, root.loc),
    ]);
  }
  return yamlToGoValue(root, { top: true, locations: true }) as GoMap;
}

/** Load a vars file: a map (an empty file is an empty map), with locations recorded. */
export function loadVarsFile(file: string): GoMap {
  return topLevelMap(parseYamlTree(readConfigText(file, 'vars file'), { file }), 'a vars file');
}
