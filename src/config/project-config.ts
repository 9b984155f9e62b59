/**
 * The project configuration, `sugarkube-conf.yaml`: where it is found, and its programs, global run unit and
 * settings. The file is optional; without one kapps uses the defaults.
 *
 * Unlike Sugarkube (whose configuration library lower-cased every key of this file), keys keep their case;
 * program lookup by `requires` is case-insensitive elsewhere so existing projects keep working.
 */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { error as diagnosticError, type Diagnostic } from '../diagnostics/diagnostic.js';
import { readDescriptor, readGlobalRunUnit } from './descriptor.js';
import { setLocation } from './locations.js';
import { ConfigReader, entriesOf, isNull, itemsOf, readBool, readInt, readText } from './reader.js';
import { normaliseSubstitution, type SourceSubstitution } from './source-substitution.js';
import { readConfigText, throwIfErrors } from './read-file.js';
import { DESCRIPTOR_FIELDS, PROGRAM_FIELDS, projectConfigFile } from './schema.js';
import type { ProjectConfig } from './types.js';
import { sortByLocation, validateTree } from './validate.js';
import { parseYamlTree } from '../yaml/read.js';

/** The project configuration's file name. */
export const PROJECT_CONFIG_FILE = 'sugarkube-conf.yaml';

/** Default worker pool size. */
export const DEFAULT_NUM_WORKERS = 5;

/** Where to look for the project configuration. */
export interface ProjectConfigSearch {
  /** `--config FILE`: used as given (relative to `cwd`); it must exist. */
  readonly configFile?: string;
  /** The directory kapps runs in. */
  readonly cwd: string;
  /** The stack file; its directory and that directory's ancestors are searched. */
  readonly stackFile?: string;
  /** The home directory (default: the user's); `~/.sugarkube/` is searched. */
  readonly homeDir?: string;
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The directories searched for sugarkube-conf.yaml, in order: the working directory, the stack file's directory
 * and its ancestors, `~/.sugarkube/`, `/etc/sugarkube/`.
 */
export function projectConfigSearchPath(opts: ProjectConfigSearch): string[] {
  const dirs = [path.resolve(opts.cwd)];
  if (opts.stackFile !== undefined) {
    let dir = path.dirname(path.resolve(opts.cwd, opts.stackFile));
    for (;;) {
      dirs.push(dir);
      const parent = path.dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  dirs.push(path.join(opts.homeDir ?? homedir(), '.sugarkube'), '/etc/sugarkube');
  return [...new Set(dirs)];
}

/** The absolute path of the project configuration to use, or undefined when there is none. */
export function findProjectConfig(opts: ProjectConfigSearch): string | undefined {
  if (opts.configFile !== undefined) return path.resolve(opts.cwd, opts.configFile);
  for (const dir of projectConfigSearchPath(opts)) {
    const file = path.join(dir, PROJECT_CONFIG_FILE);
    if (isFile(file)) return file;
  }
  return undefined;
}

/** The configuration used when no file is found. */
export function defaultProjectConfig(): ProjectConfig {
  return { num_workers: DEFAULT_NUM_WORKERS, programs: new Map() };
}

const HONOURED = `${PROGRAM_FIELDS.slice(0, -1).join(', ')} and ${PROGRAM_FIELDS[PROGRAM_FIELDS.length - 1] ?? ''}`;

/**
 * Find and load the project configuration. Absent → defaults (`num_workers` 5, no programs). Unknown keys and
 * descriptor fields a program ignores are warnings; everything else that is wrong is a `ConfigError` listing
 * every problem of the file.
 */
export function loadProjectConfig(opts: ProjectConfigSearch): { config: ProjectConfig; warnings: Diagnostic[] } {
  const file = findProjectConfig(opts);
  if (file === undefined) return { config: defaultProjectConfig(), warnings: [] };
  const text = readConfigText(file, 'configuration file');
  return parseProjectConfig(text, file);
}

/** Parse sugarkube-conf.yaml text (see `loadProjectConfig`). */
export function parseProjectConfig(text: string, file: string): { config: ProjectConfig; warnings: Diagnostic[] } {
  const root = parseYamlTree(text, { file });
  const r = new ConfigReader(file, root);
  r.diagnostics.push(
    ...validateTree(projectConfigFile, root, {
      file,
      unknownKeys: 'warning',
      describeUnknownKey: (at, key) =>
        at.length === 2 && at[0] === 'programs' && DESCRIPTOR_FIELDS.includes(key)
          ? { message: `\`${key}\` is ignored in a program`, hint: `a program can set ${HONOURED}` }
          : undefined,
    }),
  );
  const config: ProjectConfig = { ...defaultProjectConfig(), file };
  if (root) setLocation(config, root.loc);
  for (const { key, value } of entriesOf(root ?? undefined)) {
    if (isNull(value)) continue;
    const set = <K extends keyof ProjectConfig>(k: K, v: ProjectConfig[K] | undefined): void => {
      if (v === undefined) return;
      config[k] = v;
      setLocation(config, value.loc, k);
    };
    switch (key.text) {
      case 'num_workers': {
        const n = readInt(value);
        set('num_workers', n !== undefined && n >= 1 ? n : undefined);
        break;
      }
      case 'log_level':
      case 'project':
      case 'backend':
        set(key.text, readText(value));
        break;
      case 'json_logs':
      case 'no_color':
      case 'verbose':
        set(key.text, readBool(value));
        break;
      case 'run_units':
        if (value.kind === 'map') set('run_units', readGlobalRunUnit(r, value));
        break;
      case 'source_substitutions': {
        const list: SourceSubstitution[] = [];
        for (const item of itemsOf(value)) {
          let prefix: string | undefined;
          let replace: string | undefined;
          for (const e of entriesOf(item)) {
            if (e.key.text === 'prefix') prefix = readText(e.value);
            if (e.key.text === 'replace') replace = readText(e.value);
          }
          // A missing field is reported by the schema check.
          if (prefix === undefined || replace === undefined) continue;
          const n = normaliseSubstitution(prefix, replace, path.dirname(file));
          if (typeof n === 'string') {
            r.diagnostics.push(diagnosticError(`source_substitutions: ${n}`, item.loc));
            continue;
          }
          list.push({ ...n, origin: `${file}:${String(item.loc.line)}`, at: item.loc });
        }
        set('source_substitutions', list);
        break;
      }
      case 'programs':
        for (const p of entriesOf(value)) {
          const name = p.key.text;
          const program = readDescriptor(r, p.value, 'program');
          config.programs.set(name, program);
          setLocation(config.programs, p.value.loc, name);
        }
        setLocation(config.programs, value.loc);
        setLocation(config, value.loc, 'programs');
        break;
      default:
        break;
    }
  }
  const diagnostics = sortByLocation(r.diagnostics);
  throwIfErrors(diagnostics);
  return { config, warnings: diagnostics };
}
