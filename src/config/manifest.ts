/**
 * Manifest files: an ordered list of kapps with shared defaults. Loading is strict: unknown keys are errors (the
 * old `state:` key gets a hint that `conditions` replaced it), every kapp needs an id without `.`, `:` or `*`, and
 * kapp ids must be unique in the manifest.
 */
import { readDescriptor } from './descriptor.js';
import { locationOf, setLocation } from './locations.js';
import { NAME_HINT, nameProblem } from './names.js';
import { ConfigReader, entriesOf, isNull, itemsOf, readBool } from './reader.js';
import { readConfigText, throwIfErrors } from './read-file.js';
import { manifestFile } from './schema.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { KappDescriptor, ManifestConfig, ManifestRefConfig } from './types.js';
import { sortByLocation, validateTree } from './validate.js';
import { mapEntry, parseYamlTree, type YamlNode } from '../yaml/read.js';

/** Characters a kapp id must not contain (they separate ids in selectors and fully-qualified ids). */
const RESERVED = /[.:*]/;

function readKapps(r: ConfigReader, node: YamlNode): (KappDescriptor & { id: string })[] {
  const kapps: (KappDescriptor & { id: string })[] = [];
  const seen = new Map<string, YamlNode>();
  for (const item of itemsOf(node)) {
    if (item.kind !== 'map') continue;
    const d = readDescriptor(r, item, 'lists');
    const idNode = mapEntry(item, 'id')?.value;
    if (d.id === undefined || !idNode) continue;
    const id = d.id;
    if (RESERVED.test(id)) {
      r.error(`kapp id \`${id}\` contains a reserved character`, idNode.loc, {
        path: r.pathOf(idNode),
        hint: 'kapp ids must not contain `.`, `:` or `*`',
      });
    } else if (nameProblem(id)) {
      r.error(`kapp id \`${id}\` ${nameProblem(id)}`, idNode.loc, { path: r.pathOf(idNode), hint: NAME_HINT });
    }
    const first = seen.get(id);
    if (first) {
      r.error(`duplicate kapp id \`${id}\``, idNode.loc, {
        path: r.pathOf(idNode),
        related: [{ message: `\`${id}\` first defined here`, location: first.loc }],
      });
    } else seen.set(id, idNode);
    setLocation(kapps, item.loc, kapps.length);
    kapps.push(d as KappDescriptor & { id: string });
  }
  setLocation(kapps, node.loc);
  return kapps;
}

/**
 * Load the manifest a stack refers to. Throws `ConfigError` with every problem of the file; returns warnings
 * (currently none for manifests, which are strict) otherwise.
 */
export function loadManifest(ref: ManifestRefConfig): { manifest: ManifestConfig; warnings: Diagnostic[] } {
  const file = ref.uri;
  const root = parseYamlTree(readConfigText(file, 'manifest', locationOf(ref, 'uri')), { file });
  const r = new ConfigReader(file, root);
  r.diagnostics.push(...validateTree(manifestFile, root, { file, unknownKeys: 'error' }));
  const manifest: ManifestConfig = { id: ref.id, file, sequential: false, defaults: {}, kapps: [] };
  if (root) setLocation(manifest, root.loc);
  const idLoc = locationOf(ref, 'id');
  if (idLoc) setLocation(manifest, idLoc, 'id');
  for (const { key, value } of entriesOf(root ?? undefined)) {
    if (isNull(value)) continue;
    switch (key.text) {
      case 'defaults':
        manifest.defaults = readDescriptor(r, value, 'defaults');
        setLocation(manifest, value.loc, 'defaults');
        break;
      case 'options': {
        const sequential = value.kind === 'map' ? mapEntry(value, 'sequential') : undefined;
        const v = readBool(sequential?.value);
        if (v !== undefined && sequential) {
          manifest.sequential = v;
          setLocation(manifest, sequential.value.loc, 'sequential');
        }
        break;
      }
      case 'kapps':
        manifest.kapps = readKapps(r, value);
        setLocation(manifest, value.loc, 'kapps');
        break;
      default:
        break;
    }
  }
  const diagnostics = sortByLocation(r.diagnostics);
  throwIfErrors(diagnostics);
  return { manifest, warnings: diagnostics };
}
