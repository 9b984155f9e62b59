/**
 * A kapp's own `sugarkube.yaml`: a descriptor with sources and outputs as lists, loaded strictly.
 */
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { readDescriptor } from './descriptor.js';
import { ConfigReader } from './reader.js';
import { readConfigText, throwIfErrors } from './read-file.js';
import { kappDescriptor } from './schema.js';
import type { KappDescriptor } from './types.js';
import { sortByLocation, validateTree } from './validate.js';
import { parseYamlTree } from '../yaml/read.js';

/**
 * Load a kapp's sugarkube.yaml. An empty file is an empty descriptor. Throws `ConfigError` with every problem of
 * the file.
 */
export function loadKappDescriptor(file: string): { descriptor: KappDescriptor; warnings: Diagnostic[] } {
  const root = parseYamlTree(readConfigText(file, 'kapp descriptor'), { file });
  const r = new ConfigReader(file, root);
  r.diagnostics.push(...validateTree(kappDescriptor, root, { file, unknownKeys: 'error' }));
  const descriptor = root ? readDescriptor(r, root, 'lists') : {};
  const diagnostics = sortByLocation(r.diagnostics);
  throwIfErrors(diagnostics);
  return { descriptor, warnings: diagnostics };
}
