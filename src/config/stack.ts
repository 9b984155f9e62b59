/**
 * Stack files: a map of named stacks (other top-level keys, e.g. YAML anchors, are allowed). Loading one stack
 * resolves its paths against the stack file's directory, normalises its defaults and manifest overrides, and applies
 * the command line's stack overrides.
 *
 * Unknown keys inside a stack are warnings, not errors: Sugarkube ignored them, and existing files carry some
 * (e.g. an old `state: absent` in overrides).
 */
import path from 'node:path';
import { error as errorDiag, type Diagnostic } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { newGoMap } from '../go-value/value.js';
import { readDescriptor } from './descriptor.js';
import { didYouMean } from '../diagnostics/did-you-mean.js';
import { locationOf, setLocation } from './locations.js';
import { NAME_HINT, nameProblem } from './names.js';
import { ConfigReader, entriesOf, isNull, itemsOf, readMap, readText, readTexts } from './reader.js';
import { readConfigText, throwIfErrors } from './read-file.js';
import { stackEntry } from './schema.js';
import { gitRefProblem } from './source-uri.js';
import type { KappDescriptor, ManifestRefConfig, StackConfig } from './types.js';
import { formatPath, sortByLocation, validateTree, type FieldPath } from './validate.js';
import { mapEntry, nodeKindName, parseYamlTree, type YamlNode } from '../yaml/read.js';

/** Stack settings given on the command line; non-empty values replace the stack file's. */
export interface StackOverrides {
  readonly provider?: string;
  readonly provisioner?: string;
  readonly account?: string;
  readonly region?: string;
  readonly profile?: string;
  readonly cluster?: string;
}

const SETTINGS = ['provider', 'provisioner', 'account', 'region', 'profile', 'cluster'] as const;

/** A manifest's default id: its file name without the extension (`manifests/web/sites.yaml` → `sites`). */
export function defaultManifestId(uri: string): string {
  const base = path.basename(uri);
  return base.slice(0, base.length - path.extname(base).length);
}

function readManifestRef(r: ConfigReader, node: YamlNode, dir: string, at: FieldPath): ManifestRefConfig | undefined {
  if (node.kind !== 'map') return undefined;
  const uriNode = mapEntry(node, 'uri')?.value;
  const uri = readText(uriNode);
  if (uri === undefined || !uriNode) return undefined;
  const abs = path.resolve(dir, uri);
  const idNode = mapEntry(node, 'id')?.value;
  const ref: ManifestRefConfig = {
    uri: abs,
    id: readText(idNode) ?? defaultManifestId(uri),
    overrides: new Map<string, KappDescriptor>(),
    versions: new Map<string, string>(),
  };
  setLocation(ref, node.loc);
  setLocation(ref, uriNode.loc, 'uri');
  setLocation(ref, (idNode && !isNull(idNode) ? idNode : uriNode).loc, 'id');
  const idProblem = nameProblem(ref.id);
  if (idProblem) {
    const explicit = idNode && !isNull(idNode);
    r.error(
      `manifest id \`${ref.id}\` ${idProblem}${explicit ? '' : ` (it comes from the uri \`${uri}\`)`}`,
      (explicit ? idNode : uriNode).loc,
      {
        path: formatPath([...at, explicit ? 'id' : 'uri']),
        hint: explicit ? NAME_HINT : `give it an explicit \`id:\`; ${NAME_HINT}`,
      },
    );
  }
  const versions = mapEntry(node, 'versions')?.value;
  for (const { key, value } of entriesOf(versions)) {
    const slash = key.text.indexOf('/');
    if (slash <= 0 || slash === key.text.length - 1) {
      r.error(`versions key \`${key.text}\` must be \`<kapp id>/<source id>\``, key.loc, {
        path: formatPath([...at, 'versions', key.text]),
      });
      continue;
    }
    const version = readText(value);
    if (version === undefined) continue;
    const problem = version !== '' && !version.includes('{{') ? gitRefProblem(version) : undefined;
    if (problem) {
      r.error(`version \`${version}\` is refused as a git ref: ${problem}`, value.loc, {
        path: formatPath([...at, 'versions', key.text]),
        hint: 'name a branch, tag or commit',
      });
      continue;
    }
    ref.versions.set(key.text, version);
    setLocation(ref.versions, value.loc, key.text);
  }
  if (versions) {
    setLocation(ref.versions, versions.loc);
    setLocation(ref, versions.loc, 'versions');
  }
  const overrides = mapEntry(node, 'overrides')?.value;
  for (const { key, value } of entriesOf(overrides)) {
    ref.overrides.set(key.text, readDescriptor(r, value, 'maps'));
    setLocation(ref.overrides, value.loc, key.text);
  }
  if (overrides) {
    setLocation(ref.overrides, overrides.loc);
    setLocation(ref, overrides.loc, 'overrides');
  }
  return ref;
}

/** Report manifests that share an id (later ones would shadow earlier ones). */
function checkManifestIds(r: ConfigReader, refs: ManifestRefConfig[], at: FieldPath): void {
  const seen = new Map<string, ManifestRefConfig>();
  refs.forEach((ref, i) => {
    const first = seen.get(ref.id);
    const loc = locationOf(ref, 'id');
    if (first && loc) {
      r.error(`duplicate manifest id \`${ref.id}\``, loc, {
        path: formatPath([...at, i, 'id']),
        hint: 'give one of them an explicit `id:`',
        related: [{ message: `\`${ref.id}\` first used here`, location: locationOf(first, 'id') }],
      });
    } else seen.set(ref.id, ref);
  });
}

/**
 * The stacks of a stack file's top level: the entries that map names to settings with a `manifests` key. Other
 * top-level keys (Sugarkube's `defaults: &defaults` anchor of shared settings) are not stacks.
 */
export function stackNames(root: YamlNode | null | undefined): string[] {
  return entriesOf(root ?? undefined)
    .filter((e) => e.value.kind === 'map' && mapEntry(e.value, 'manifests') !== undefined)
    .map((e) => e.key.text);
}

/**
 * Load stack `name` from `file`. Throws `ConfigError` if the file is missing, the stack does not exist (listing the
 * valid names) or the stack is invalid (every problem at once); returns the warnings otherwise.
 */
export function loadStack(
  file: string,
  name: string,
  overrides: StackOverrides = {},
): { stack: StackConfig; warnings: Diagnostic[] } {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  const root = parseYamlTree(readConfigText(abs, 'stack file'), { file: abs });
  if (root && root.kind !== 'map' && !(root.kind === 'scalar' && root.value === null)) {
    throw new ConfigError([
      errorDiag(`a stack file must map stack names to stacks, got ${nodeKindName(root)}`, root.loc),
    ]);
  }
  const entry = root?.kind === 'map' ? mapEntry(root, name) : undefined;
  if (!entry) {
    const names = stackNames(root);
    const hint = didYouMean(name, names);
    throw new ConfigError([
      errorDiag(
        `no stack called \`${name}\` in stack file \`${file}\`; valid stack names are: ${names.join(', ') || '(none)'}`,
        undefined,
        hint ? { hint } : {},
      ),
    ]);
  }
  const node = entry.value;
  const r = new ConfigReader(abs, node, [name]);
  r.diagnostics.push(...validateTree(stackEntry, node, { file: abs, basePath: [name], unknownKeys: 'warning' }));
  const stack: StackConfig = {
    name,
    file: abs,
    dir,
    provider: '',
    provisioner: '',
    account: '',
    region: '',
    profile: '',
    cluster: '',
    manifests: [],
    provider_vars_dirs: [],
    kapp_vars_dirs: [],
    template_dirs: [],
    vars: newGoMap(),
    defaults: {},
  };
  setLocation(stack, node.loc);
  setLocation(stack, entry.key.loc, 'name');
  const keyProblem = nameProblem(name);
  if (keyProblem)
    r.error(`stack name \`${name}\` ${keyProblem}`, entry.key.loc, { path: formatPath([name]), hint: NAME_HINT });
  for (const { key, value } of entriesOf(node)) {
    if (isNull(value)) continue;
    const k = key.text;
    const at: FieldPath = [name, k];
    switch (k) {
      case 'name':
      case 'provider':
      case 'provisioner':
      case 'account':
      case 'region':
      case 'profile':
      case 'cluster': {
        const v = readText(value);
        const problem = k === 'name' && v !== undefined ? nameProblem(v) : undefined;
        if (problem) r.error(`stack name \`${v}\` ${problem}`, value.loc, { path: formatPath(at), hint: NAME_HINT });
        if (v !== undefined) {
          stack[k] = v;
          setLocation(stack, value.loc, k);
        }
        break;
      }
      case 'provider_vars_dirs':
      case 'kapp_vars_dirs':
      case 'template_dirs': {
        const dirs = readTexts(value);
        if (dirs) {
          const resolved = dirs.map((d) => path.resolve(dir, d));
          itemsOf(value).forEach((item, i) => setLocation(resolved, item.loc, i));
          setLocation(resolved, value.loc);
          stack[k] = resolved;
          setLocation(stack, value.loc, k);
        }
        break;
      }
      case 'manifests': {
        const refs: ManifestRefConfig[] = [];
        itemsOf(value).forEach((item, i) => {
          const ref = readManifestRef(r, item, dir, [...at, i]);
          if (ref) {
            setLocation(refs, item.loc, refs.length);
            refs.push(ref);
          }
        });
        setLocation(refs, value.loc);
        checkManifestIds(r, refs, at);
        stack.manifests = refs;
        setLocation(stack, value.loc, k);
        break;
      }
      case 'defaults':
        stack.defaults = readDescriptor(r, value, 'defaults');
        setLocation(stack, value.loc, k);
        break;
      case 'vars': {
        const vars = readMap(value);
        if (vars) {
          stack.vars = vars;
          setLocation(stack, value.loc, k);
        }
        break;
      }
      case 'filepath':
        r.warn('`filepath` is not supported and is ignored', key.loc, { path: formatPath(at) });
        break;
      default:
        break;
    }
  }
  for (const setting of SETTINGS) {
    const v = overrides[setting];
    if (v !== undefined && v !== '') stack[setting] = v;
  }
  const diagnostics = sortByLocation(r.diagnostics);
  if (node.kind !== 'map' || mapEntry(node, 'manifests') === undefined) {
    // A misspelled `manifests:` or a top-level anchor of shared settings: said after the warnings that explain it.
    const others = stackNames(root).filter((n) => n !== name);
    diagnostics.push(
      errorDiag(`\`${name}\` has no \`manifests\`, so it is not a stack`, entry.key.loc, {
        path: formatPath([name, 'manifests']),
        hint: others.length
          ? `the stacks of \`${file}\` are: ${others.join(', ')}`
          : 'a stack lists its manifests under `manifests:`',
      }),
    );
  }
  throwIfErrors(diagnostics);
  return { stack, warnings: diagnostics };
}
