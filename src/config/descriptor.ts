/**
 * Normalisation of kapp descriptor fragments (a kapp's sugarkube.yaml, manifest defaults and kapp entries, stack
 * defaults and overrides, programs) from a validated located tree into the shapes of `./types.ts`, recording the
 * location of every object and field. Also the semantic checks a schema cannot express: source URIs, duplicate
 * source/output ids, output formats, `call` with `command`.
 */
import type { GoValue } from '../go-value/value.js';
import type {
  ActionConfig,
  DependsOnConfig,
  KappDescriptor,
  OutputConfig,
  RunStepConfig,
  RunUnitConfig,
  SourceConfig,
  TemplateConfig,
} from './types.js';
import { PHASES, type Phase } from '../vocabulary.js';
import { setLocation, setLocationNode } from './locations.js';
import type { ConfigReader } from './reader.js';
import {
  entriesOf,
  isNull,
  itemsOf,
  readBool,
  readBoolOrTemplate,
  readInt,
  readIntOrTemplate,
  readMap,
  readText,
  readTextMap,
  readTexts,
  readValue,
} from './reader.js';
import { PROGRAM_FIELDS } from './schema.js';
import {
  SourceUriError,
  defaultSourceId,
  gitPathProblem,
  gitRefProblem,
  gitRepoProblem,
  parseSourceUri,
} from './source-uri.js';
import type { YamlMapEntry, YamlNode } from '../yaml/read.js';

/**
 * Which descriptor a node is: `lists` (sugarkube.yaml, manifest kapp entries), `maps` (stack overrides: sources and
 * outputs keyed by id), `defaults` (manifest/stack defaults: no id, sources, outputs), `program` (only the fields a
 * program honours).
 */
export type DescriptorShape = 'lists' | 'maps' | 'defaults' | 'program';

const PHASE_NAMES = new Set<string>(PHASES);
const OUTPUT_FORMATS = new Set(['json', 'yaml', 'text']);
const ACTION_LISTS = new Set([
  'pre_install_actions',
  'post_install_actions',
  'pre_delete_actions',
  'post_delete_actions',
]);
const PROGRAM = new Set<string>(PROGRAM_FIELDS);

function isTemplate(s: string): boolean {
  return s.includes('{{');
}

/**
 * Assign `value` to `obj[key]` unless it is undefined. The field's location comes from the node `obj` is linked
 * to (`setLocationNode`), whose entry `key` it is.
 */
function put<T extends object, K extends keyof T & string>(obj: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) obj[key] = value;
}

function readStep(r: ConfigReader, node: YamlNode): RunStepConfig {
  const step: RunStepConfig = {};
  setLocationNode(step, node);
  for (const { key, value } of entriesOf(node)) {
    if (isNull(value)) continue;
    switch (key.text) {
      case 'name':
      case 'command':
      case 'args':
      case 'working_dir':
      case 'stdout':
      case 'stderr':
      case 'print':
      case 'call':
        put(step, key.text, readText(value));
        break;
      case 'env_vars':
        put(step, 'env_vars', readTextMap(value));
        break;
      case 'expected_exit_code':
      case 'timeout':
        put(step, key.text, readIntOrTemplate(value));
        break;
      case 'ignore_errors':
      case 'load_outputs':
        put(step, key.text, readBoolOrTemplate(value));
        break;
      case 'conditions':
      case 'binaries':
        put(step, key.text, readTexts(value));
        break;
      case 'merge_priority':
        put(step, 'merge_priority', readInt(value));
        break;
      default:
        break;
    }
  }
  if (step.call !== undefined && step.command !== undefined) {
    r.error("a run step can't have both `call` and `command`", node.loc, {
      path: r.pathOf(node),
      hint: '`call` replaces the step by other steps; move the command to a step of its own',
    });
  }
  return step;
}

function readRunUnit(r: ConfigReader, name: string, node: YamlNode): RunUnitConfig {
  const unit: RunUnitConfig = { name };
  setLocationNode(unit, node);
  for (const { key, value } of entriesOf(node)) {
    if (isNull(value)) continue;
    const k = key.text;
    if (k === 'working_dir') put(unit, k, readText(value));
    else if (k === 'conditions' || k === 'binaries') put(unit, k, readTexts(value));
    else if (k === 'env_vars') put(unit, k, readTextMap(value));
    else if (PHASE_NAMES.has(k) && value.kind === 'seq') {
      const steps = value.items.map((item) => readStep(r, item));
      setLocationNode(steps, value);
      put(unit, k as Phase, steps);
    }
  }
  return unit;
}

/** `run_units` (a map of units) → units in file order. */
function readRunUnits(r: ConfigReader, node: YamlNode): RunUnitConfig[] {
  const units = entriesOf(node).map(({ key, value }) => readRunUnit(r, key.text, value));
  setLocationNode(units, node);
  return units;
}

/** The global run unit of sugarkube-conf.yaml (`run_units:` holds one unit). */
export function readGlobalRunUnit(r: ConfigReader, node: YamlNode): RunUnitConfig {
  return readRunUnit(r, 'sugarkube_config_file', node);
}

/** Report the second of two entries with the same id. */
function checkUnique(r: ConfigReader, what: string, items: { id: string; node: YamlNode }[]) {
  const seen = new Map<string, YamlNode>();
  items.forEach(({ id, node }) => {
    const first = seen.get(id);
    if (first) {
      r.error(`duplicate ${what} id \`${id}\``, node.loc, {
        path: r.pathOf(node),
        related: [{ message: `\`${id}\` first defined here`, location: first.loc }],
      });
    } else seen.set(id, node);
  });
}

function readSource(r: ConfigReader, node: YamlNode, keyId: string | undefined): SourceConfig {
  let idNode: YamlNode | undefined;
  let uriNode: YamlNode | undefined;
  let optionsNode: YamlNode | undefined;
  for (const { key, value } of entriesOf(node)) {
    if (key.text === 'id') idNode = value;
    else if (key.text === 'uri') uriNode = value;
    else if (key.text === 'options') optionsNode = value;
  }
  const explicit = readText(idNode);
  const uri = readText(uriNode);
  let derived = '';
  if (uri !== undefined && uriNode) {
    try {
      const parsed = parseSourceUri(uri);
      derived = defaultSourceId(parsed);
      if (parsed.kind === 'git') checkGitUri(r, uriNode, parsed);
    } catch (e) {
      if (!(e instanceof SourceUriError)) throw e;
      r.error(e.message, uriNode.loc, { path: r.pathOf(uriNode), ...(e.hint ? { hint: e.hint } : {}) });
    }
  }
  if (keyId !== undefined && explicit !== undefined && explicit !== keyId && idNode) {
    r.error(`source id \`${explicit}\` differs from its key \`${keyId}\``, idNode.loc, { path: r.pathOf(idNode) });
  }
  const source: SourceConfig = { id: keyId ?? explicit ?? derived, explicitId: explicit !== undefined };
  setLocationNode(source, node);
  if (uri !== undefined && uriNode) put(source, 'uri', uri);
  if (optionsNode && !isNull(optionsNode)) put(source, 'options', readMap(optionsNode));
  const branchNode = entriesOf(optionsNode).find((e) => e.key.text === 'branch')?.value;
  const branch = readText(branchNode);
  if (branchNode && branch !== undefined && branch !== '' && !isTemplate(branch)) {
    const problem = gitRefProblem(branch);
    if (problem) {
      r.error(`git branch \`${branch}\` is refused: ${problem}`, branchNode.loc, {
        path: r.pathOf(branchNode),
        hint: 'name a branch, tag or commit',
      });
    }
  }
  return source;
}

/** Report the parts of a git source URI that git could misread (an option, a remote helper, `..`). */
function checkGitUri(r: ConfigReader, uriNode: YamlNode, parsed: { repo: string; path: string; ref: string }) {
  const at = { path: r.pathOf(uriNode) };
  const repoProblem = gitRepoProblem(parsed.repo);
  if (repoProblem) r.error(`git repository \`${parsed.repo}\` is refused: ${repoProblem}`, uriNode.loc, at);
  const pathProblem = gitPathProblem(parsed.path);
  if (pathProblem) r.error(`path inside the repository \`${parsed.path}\` is refused: ${pathProblem}`, uriNode.loc, at);
  const refProblem = parsed.ref !== '' && !isTemplate(parsed.ref) ? gitRefProblem(parsed.ref) : undefined;
  if (refProblem) {
    r.error(`git ref \`${parsed.ref}\` is refused: ${refProblem}`, uriNode.loc, {
      ...at,
      hint: 'name a branch, tag or commit after `#`',
    });
  }
}

function readOutput(r: ConfigReader, node: YamlNode, keyId: string | undefined): OutputConfig {
  const output: OutputConfig = { id: keyId ?? '' };
  setLocationNode(output, node);
  for (const { key, value } of entriesOf(node)) {
    if (isNull(value)) continue;
    const k = key.text;
    if (k === 'id') {
      const id = readText(value);
      if (id !== undefined && keyId !== undefined && id !== keyId) {
        r.error(`output id \`${id}\` differs from its key \`${keyId}\``, value.loc, { path: r.pathOf(value) });
      }
      if (id !== undefined) put(output, 'id', keyId ?? id);
    } else if (k === 'path') put(output, k, readText(value));
    else if (k === 'format') {
      const format = readText(value);
      if (format !== undefined && !isTemplate(format) && !OUTPUT_FORMATS.has(format.toLowerCase())) {
        r.error(`unsupported output format \`${format}\``, value.loc, {
          path: r.pathOf(value),
          hint: 'use json, yaml or text',
        });
      }
      put(output, k, format);
    } else if (k === 'sensitive') put(output, k, readBool(value));
    else if (k === 'conditions') put(output, k, readTexts(value));
  }
  return output;
}

/** A list (`lists`) or a map keyed by id (`maps`) of sources/outputs → an array with ids. */
function readKeyed<T extends { id: string }>(
  r: ConfigReader,
  what: string,
  node: YamlNode,
  keyed: boolean,
  read: (r: ConfigReader, node: YamlNode, keyId: string | undefined) => T,
): T[] {
  const out: T[] = [];
  if (keyed) {
    for (const { key, value } of entriesOf(node)) {
      out.push(read(r, value, key.text));
    }
  } else {
    const items = itemsOf(node);
    for (const item of items) out.push(read(r, item, undefined));
    checkUnique(
      r,
      what,
      out.map((o, i) => ({ id: o.id, node: items[i] ?? node })),
    );
  }
  setLocationNode(out, node);
  return out;
}

function readTemplates(node: YamlNode): TemplateConfig[] {
  const out: TemplateConfig[] = [];
  for (const { key, value } of entriesOf(node)) {
    const t: TemplateConfig = { id: key.text };
    setLocationNode(t, value);
    setLocation(t, key.loc, 'id');
    for (const { key: f, value: v } of entriesOf(value)) {
      if (isNull(v)) continue;
      if (f.text === 'source' || f.text === 'dest') put(t, f.text, readText(v));
      else if (f.text === 'sensitive') put(t, 'sensitive', readBool(v));
      else if (f.text === 'conditions') put(t, 'conditions', readTexts(v));
    }
    out.push(t);
  }
  setLocationNode(out, node);
  return out;
}

function readDependsOn(node: YamlNode): DependsOnConfig[] {
  const out: DependsOnConfig[] = [];
  for (const item of itemsOf(node)) {
    let idNode: YamlNode | undefined;
    let conditions: YamlNode | undefined;
    for (const { key, value } of entriesOf(item)) {
      if (key.text === 'id') idNode = value;
      else if (key.text === 'conditions') conditions = value;
    }
    const dep: DependsOnConfig = { id: readText(idNode) ?? '' };
    setLocationNode(dep, item);
    if (conditions && !isNull(conditions)) put(dep, 'conditions', readTexts(conditions));
    out.push(dep);
  }
  // A list of exactly its length: one grown by `push` keeps room for more, and a stack keeps every kapp's.
  const list = out.slice();
  setLocationNode(list, node);
  return list;
}

function readActions(node: YamlNode): ActionConfig[] {
  const out: ActionConfig[] = [];
  for (const item of itemsOf(node)) {
    for (const { key, value } of entriesOf(item)) {
      const action: ActionConfig = { id: key.text };
      setLocation(action, key.loc);
      setLocation(action, key.loc, 'id');
      const params = entriesOf(value).find((e: YamlMapEntry) => e.key.text === 'params')?.value;
      if (params?.kind === 'seq') {
        const list: GoValue[] = params.items.map((p) => readValue(p));
        setLocationNode(list, params);
        action.params = list;
        setLocation(action, params.loc, 'params');
      }
      setLocation(out, key.loc, out.length);
      out.push(action);
    }
  }
  setLocation(out, node.loc);
  return out;
}

/** Convert a descriptor node. Fields the shape does not allow are skipped (validation reported them). */
export function readDescriptor(r: ConfigReader, node: YamlNode, shape: DescriptorShape): KappDescriptor {
  const d: KappDescriptor = {};
  setLocationNode(d, node);
  for (const { key, value } of entriesOf(node)) {
    const k = key.text;
    if (isNull(value)) continue;
    if (shape === 'program' && !PROGRAM.has(k)) continue;
    switch (k) {
      case 'id':
        if (shape !== 'defaults') put(d, 'id', readText(value));
        break;
      case 'sources':
        if (shape === 'lists' || shape === 'maps') {
          put(d, 'sources', readKeyed(r, 'source', value, shape === 'maps', readSource));
        }
        break;
      case 'outputs':
        if (shape === 'lists' || shape === 'maps') {
          put(d, 'outputs', readKeyed(r, 'output', value, shape === 'maps', readOutput));
        }
        break;
      case 'requires':
      case 'conditions':
        put(d, k, readTexts(value));
        break;
      case 'vars':
      case 'metadata':
        put(d, k, readMap(value));
        break;
      case 'templates':
        if (value.kind === 'map') put(d, 'templates', readTemplates(value));
        break;
      case 'run_units':
        if (value.kind === 'map') put(d, 'run_units', readRunUnits(r, value));
        break;
      case 'depends_on':
        if (value.kind === 'seq') put(d, 'depends_on', readDependsOn(value));
        break;
      case 'ignore_global_defaults':
        put(d, 'ignore_global_defaults', readBool(value));
        break;
      default:
        if (ACTION_LISTS.has(k) && value.kind === 'seq') {
          put(d, k as 'pre_install_actions', readActions(value));
        }
        break;
    }
  }
  return d;
}
