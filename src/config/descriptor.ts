/**
 * Normalisation of kapp descriptor fragments (a kapp's sugarkube.yaml, manifest defaults and kapp entries, stack
 * defaults and overrides, programs) from a validated located tree into the shapes of `./types.ts`, recording the
 * location of every object and field. Also the semantic checks a schema cannot express: source URIs, duplicate
 * source/output ids, output formats, `call` with `command`.
 */
import type { GoValue } from '../template/value.js';
import type {
  ActionConfig,
  DependsOnConfig,
  KappDescriptor,
  OutputConfig,
  PhaseKey,
  RunStepConfig,
  RunUnitConfig,
  SourceConfig,
  TemplateConfig,
} from './types.js';
import { PHASE_KEYS } from './types.js';
import { setLocation } from './locations.js';
import type {
  ConfigReader} from './reader.js';
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
import { SourceUriError, defaultSourceId, parseSourceUri } from './source-uri.js';
import { formatPath, type FieldPath } from './validate.js';
import type { YamlMapEntry, YamlNode } from './yaml.js';

/**
 * Which descriptor a node is: `lists` (sugarkube.yaml, manifest kapp entries), `maps` (stack overrides: sources and
 * outputs keyed by id), `defaults` (manifest/stack defaults: no id, sources, outputs), `program` (only the fields a
 * program honours).
 */
export type DescriptorShape = 'lists' | 'maps' | 'defaults' | 'program';

const PHASES = new Set<string>(PHASE_KEYS);
const OUTPUT_FORMATS = new Set(['json', 'yaml', 'text']);
const ACTION_LISTS = ['pre_install_actions', 'post_install_actions', 'pre_delete_actions', 'post_delete_actions'];

function isTemplate(s: string): boolean {
  return s.includes('{{');
}

/** Assign `value` to `obj[key]` and record where it came from, unless it is undefined. */
function put<T extends object, K extends keyof T & string>(obj: T, key: K, value: T[K] | undefined, node: YamlNode) {
  if (value === undefined) return;
  obj[key] = value;
  setLocation(obj, node.loc, key);
}

function readStep(r: ConfigReader, node: YamlNode, path: FieldPath): RunStepConfig {
  const step: RunStepConfig = {};
  setLocation(step, node.loc);
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
        put(step, key.text, readText(value), value);
        break;
      case 'env_vars':
        put(step, 'env_vars', readTextMap(value), value);
        break;
      case 'expected_exit_code':
      case 'timeout':
        put(step, key.text, readIntOrTemplate(value), value);
        break;
      case 'ignore_errors':
      case 'load_outputs':
        put(step, key.text, readBoolOrTemplate(value), value);
        break;
      case 'conditions':
      case 'binaries':
        put(step, key.text, readTexts(value), value);
        break;
      case 'merge_priority':
        put(step, 'merge_priority', readInt(value), value);
        break;
      default:
        break;
    }
  }
  if (step.call !== undefined && step.command !== undefined) {
    r.error("a run step can't have both `call` and `command`", node.loc, {
      path: formatPath(path),
      hint: '`call` replaces the step by other steps; move the command to a step of its own',
    });
  }
  return step;
}

function readRunUnit(r: ConfigReader, name: string, node: YamlNode, path: FieldPath): RunUnitConfig {
  const unit: RunUnitConfig = { name };
  setLocation(unit, node.loc);
  for (const { key, value } of entriesOf(node)) {
    if (isNull(value)) continue;
    const k = key.text;
    if (k === 'working_dir') put(unit, k, readText(value), value);
    else if (k === 'conditions' || k === 'binaries') put(unit, k, readTexts(value), value);
    else if (k === 'env_vars') put(unit, k, readTextMap(value), value);
    else if (PHASES.has(k) && value.kind === 'seq') {
      const steps = value.items.map((item, i) => readStep(r, item, [...path, k, i]));
      steps.forEach((s, i) => setLocation(steps, value.items[i]?.loc ?? value.loc, i));
      setLocation(steps, value.loc);
      put(unit, k as PhaseKey, steps, value);
    }
  }
  return unit;
}

/** `run_units` (a map of units) → units in file order. */
export function readRunUnits(r: ConfigReader, node: YamlNode, path: FieldPath): RunUnitConfig[] {
  const units = entriesOf(node).map(({ key, value }) => readRunUnit(r, key.text, value, [...path, key.text]));
  setLocation(units, node.loc);
  return units;
}

/** The global run unit of sugarkube-conf.yaml (`run_units:` holds one unit). */
export function readGlobalRunUnit(r: ConfigReader, node: YamlNode, path: FieldPath): RunUnitConfig {
  return readRunUnit(r, 'sugarkube_config_file', node, path);
}

/** Report the second of two entries with the same id. */
function checkUnique(r: ConfigReader, what: string, items: { id: string; node: YamlNode }[], path: FieldPath) {
  const seen = new Map<string, YamlNode>();
  items.forEach(({ id, node }, i) => {
    const first = seen.get(id);
    if (first) {
      r.error(`duplicate ${what} id \`${id}\``, node.loc, {
        path: formatPath([...path, i]),
        related: [{ message: `\`${id}\` first defined here`, location: first.loc }],
      });
    } else seen.set(id, node);
  });
}

function readSource(r: ConfigReader, node: YamlNode, keyId: string | undefined, path: FieldPath): SourceConfig {
  const fields = new Map(entriesOf(node).map((e) => [e.key.text, e] as const));
  const idEntry = fields.get('id');
  const uriEntry = fields.get('uri');
  const explicit = readText(idEntry?.value);
  const uri = readText(uriEntry?.value);
  let derived = '';
  if (uri !== undefined && uriEntry) {
    try {
      derived = defaultSourceId(parseSourceUri(uri));
    } catch (e) {
      if (!(e instanceof SourceUriError)) throw e;
      r.error(e.message, uriEntry.value.loc, { path: formatPath([...path, 'uri']) });
    }
  }
  if (keyId !== undefined && explicit !== undefined && explicit !== keyId && idEntry) {
    r.error(`source id \`${explicit}\` differs from its key \`${keyId}\``, idEntry.value.loc, {
      path: formatPath([...path, 'id']),
    });
  }
  const source: SourceConfig = { id: keyId ?? explicit ?? derived, explicitId: explicit !== undefined };
  setLocation(source, node.loc);
  if (idEntry) setLocation(source, idEntry.value.loc, 'id');
  if (uri !== undefined && uriEntry) put(source, 'uri', uri, uriEntry.value);
  const options = fields.get('options');
  if (options && !isNull(options.value)) put(source, 'options', readMap(options.value), options.value);
  return source;
}

function readOutput(r: ConfigReader, node: YamlNode, keyId: string | undefined, path: FieldPath): OutputConfig {
  const output: OutputConfig = { id: keyId ?? '' };
  setLocation(output, node.loc);
  for (const { key, value } of entriesOf(node)) {
    if (isNull(value)) continue;
    const k = key.text;
    if (k === 'id') {
      const id = readText(value);
      if (id !== undefined && keyId !== undefined && id !== keyId) {
        r.error(`output id \`${id}\` differs from its key \`${keyId}\``, value.loc, {
          path: formatPath([...path, 'id']),
        });
      }
      if (id !== undefined) put(output, 'id', keyId ?? id, value);
    } else if (k === 'path') put(output, k, readText(value), value);
    else if (k === 'format') {
      const format = readText(value);
      if (format !== undefined && !isTemplate(format) && !OUTPUT_FORMATS.has(format.toLowerCase())) {
        r.error(`unsupported output format \`${format}\``, value.loc, {
          path: formatPath([...path, 'format']),
          hint: 'use json, yaml or text',
        });
      }
      put(output, k, format, value);
    } else if (k === 'sensitive') put(output, k, readBool(value), value);
    else if (k === 'conditions') put(output, k, readTexts(value), value);
  }
  return output;
}

/** A list (`lists`) or a map keyed by id (`maps`) of sources/outputs → an array with ids. */
function readKeyed<T extends { id: string }>(
  r: ConfigReader,
  what: string,
  node: YamlNode,
  keyed: boolean,
  path: FieldPath,
  read: (r: ConfigReader, node: YamlNode, keyId: string | undefined, path: FieldPath) => T,
): T[] {
  const out: T[] = [];
  if (keyed) {
    for (const { key, value } of entriesOf(node)) {
      const item = read(r, value, key.text, [...path, key.text]);
      setLocation(out, value.loc, out.length);
      out.push(item);
    }
  } else {
    const items = itemsOf(node);
    items.forEach((item, i) => {
      setLocation(out, item.loc, i);
      out.push(read(r, item, undefined, [...path, i]));
    });
    checkUnique(
      r,
      what,
      out.map((o, i) => ({ id: o.id, node: items[i] ?? node })),
      path,
    );
  }
  setLocation(out, node.loc);
  return out;
}

function readTemplates(node: YamlNode): TemplateConfig[] {
  const out: TemplateConfig[] = [];
  for (const { key, value } of entriesOf(node)) {
    const t: TemplateConfig = { id: key.text };
    setLocation(t, value.loc);
    setLocation(t, key.loc, 'id');
    for (const { key: f, value: v } of entriesOf(value)) {
      if (isNull(v)) continue;
      if (f.text === 'source' || f.text === 'dest') put(t, f.text, readText(v), v);
      else if (f.text === 'sensitive') put(t, 'sensitive', readBool(v), v);
      else if (f.text === 'conditions') put(t, 'conditions', readTexts(v), v);
    }
    setLocation(out, value.loc, out.length);
    out.push(t);
  }
  setLocation(out, node.loc);
  return out;
}

function readDependsOn(node: YamlNode): DependsOnConfig[] {
  const out: DependsOnConfig[] = [];
  for (const item of itemsOf(node)) {
    const fields = new Map(entriesOf(item).map((e) => [e.key.text, e.value] as const));
    const id = fields.get('id');
    const dep: DependsOnConfig = { id: readText(id) ?? '' };
    setLocation(dep, item.loc);
    if (id) setLocation(dep, id.loc, 'id');
    const conditions = fields.get('conditions');
    if (conditions && !isNull(conditions)) put(dep, 'conditions', readTexts(conditions), conditions);
    setLocation(out, item.loc, out.length);
    out.push(dep);
  }
  setLocation(out, node.loc);
  return out;
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
        params.items.forEach((p, i) => setLocation(list, p.loc, i));
        setLocation(list, params.loc);
        put(action, 'params', list, params);
      }
      setLocation(out, key.loc, out.length);
      out.push(action);
    }
  }
  setLocation(out, node.loc);
  return out;
}

/**
 * Convert a descriptor node. Fields the shape does not allow are skipped (validation reported them).
 * @param path the node's field path in its file, for diagnostics
 */
export function readDescriptor(r: ConfigReader, node: YamlNode, shape: DescriptorShape, path: FieldPath): KappDescriptor {
  const d: KappDescriptor = {};
  setLocation(d, node.loc);
  const program = new Set<string>(PROGRAM_FIELDS);
  for (const { key, value } of entriesOf(node)) {
    const k = key.text;
    if (isNull(value)) continue;
    if (shape === 'program' && !program.has(k)) continue;
    const at: FieldPath = [...path, k];
    switch (k) {
      case 'id':
        if (shape !== 'defaults') put(d, 'id', readText(value), value);
        break;
      case 'sources':
        if (shape === 'lists' || shape === 'maps') {
          put(d, 'sources', readKeyed(r, 'source', value, shape === 'maps', at, readSource), value);
        }
        break;
      case 'outputs':
        if (shape === 'lists' || shape === 'maps') {
          put(d, 'outputs', readKeyed(r, 'output', value, shape === 'maps', at, readOutput), value);
        }
        break;
      case 'requires':
      case 'conditions':
        put(d, k, readTexts(value), value);
        break;
      case 'vars':
      case 'metadata':
        put(d, k, readMap(value), value);
        break;
      case 'templates':
        if (value.kind === 'map') put(d, 'templates', readTemplates(value), value);
        break;
      case 'run_units':
        if (value.kind === 'map') put(d, 'run_units', readRunUnits(r, value, at), value);
        break;
      case 'depends_on':
        if (value.kind === 'seq') put(d, 'depends_on', readDependsOn(value), value);
        break;
      case 'ignore_global_defaults':
        put(d, 'ignore_global_defaults', readBool(value), value);
        break;
      default:
        if (ACTION_LISTS.includes(k) && value.kind === 'seq') {
          put(d, k as 'pre_install_actions', readActions(value), value);
        }
        break;
    }
  }
  return d;
}
