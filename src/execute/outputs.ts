/**
 * Loading a kapp's declared outputs from the files its steps wrote: each output whose conditions hold is read
 * from `path` (relative to the kapp's config directory), parsed as json, yaml or text, and, when `sensitive`,
 * deleted right after and remembered by the redactor. A file larger than MAX_OUTPUT_FILE_BYTES is refused; files
 * are read and deleted without blocking.
 */
import path from 'node:path';
import { parseOutputFile } from '../config/index.js';
import { locationOf } from '../config/locations.js';
import type { OutputConfig } from '../config/types.js';
import { error as diagnosticError } from '../diagnostics/diagnostic.js';
import { ConfigError, KappsError } from '../diagnostics/errors.js';
import { evaluateConditions } from '../plan/go-bool.js';
import type { KappModel } from '../stack/kapp-model.js';
import type { Stack } from '../stack/stack.js';
import { newGoMap, type GoMap, type GoValue } from '../go-value/value.js';
import { registryKey } from '../vars/outputs.js';
import { ConfinementError, confinedReadPath, readFileUpTo, removeConfinedFile } from '../workspace/confine.js';
import type { Redactor } from './redact.js';

export interface LoadedOutputs {
  /** By registry key (hyphens as underscores); missing tolerated outputs are absent. */
  readonly values: GoMap;
  /** Non-sensitive values by output id, for the release state. */
  readonly recordable: GoMap;
  /** Declared outputs whose file was missing (tolerated). */
  readonly missing: readonly string[];
  /** Sensitive outputs read (their files are deleted: they are not read again, see `options.loaded`). */
  readonly sensitive: readonly string[];
}

/** Bytes of an output file kapps reads. */
export const MAX_OUTPUT_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Load the outputs. `mustExist`: a missing or empty file is an error (after an install); otherwise it is passed
 * over. Never deletes anything in a dry run.
 */
export async function loadOutputs(
  stack: Stack,
  kapp: KappModel,
  vars: GoMap,
  options: {
    mustExist: boolean;
    dryRun: boolean;
    redactor: Redactor;
    /** Sensitive outputs this visit read already: their files were deleted, their values are kept. */
    loaded?: ReadonlySet<string>;
  },
): Promise<LoadedOutputs> {
  const values = newGoMap();
  const recordable = newGoMap();
  const missing: string[] = [];
  const sensitive: string[] = [];
  const declared: OutputConfig[] = stack.render(kapp, kapp.descriptor.outputs ?? [], vars, 'outputs');
  for (const output of declared) {
    const ok = evaluateConditions(output.conditions ?? [], {
      kapp: kapp.id,
      owner: `output '${output.id}'`,
      ...(locationOf(output) ? { location: locationOf(output) } : {}),
    });
    if (!ok) continue;
    if (output.sensitive && options.loaded?.has(output.id)) continue;
    if (!output.path) {
      throw new ConfigError([
        diagnosticError(`kapp ${kapp.id}: output '${output.id}' has no path`, locationOf(output)),
      ]);
    }
    const use = { kapp: kapp.id, field: `output '${output.id}' path` };
    const confined = async <T>(f: () => Promise<T>): Promise<T> => {
      try {
        return await f();
      } catch (e) {
        if (!(e instanceof ConfinementError)) throw e;
        throw new ConfigError([diagnosticError(e.message, locationOf(output, 'path') ?? locationOf(output))]);
      }
    };
    const file = path.resolve(kapp.configDir, output.path);
    const readFrom = await confined(() => confinedReadPath(kapp.cacheRoot, file, use));
    /** A file that cannot be read or parsed; a sensitive one is deleted all the same. */
    const unreadable = async (e: unknown): Promise<never> => {
      if (output.sensitive && !options.dryRun) await confined(() => removeConfinedFile(kapp.cacheRoot, file, use));
      const detail =
        e instanceof ConfigError
          ? e.diagnostics.map((d) => d.message).join('; ')
          : e instanceof Error
            ? e.message
            : String(e);
      throw new KappsError(`kapp ${kapp.id}: cannot read output '${output.id}' from ${file}: ${detail}`);
    };
    let text: string | undefined;
    try {
      text = await readFileUpTo(readFrom, MAX_OUTPUT_FILE_BYTES, 'the file');
    } catch (e) {
      await unreadable(e);
    }
    if (text === undefined || text === '') {
      if (options.mustExist) {
        throw new KappsError(
          `kapp ${kapp.id}: output '${output.id}' was not produced: ${file} ${text === undefined ? 'does not exist' : 'is empty'} after the install`,
        );
      }
      missing.push(output.id);
      continue;
    }
    let value: GoValue;
    try {
      value = parseOutputFile(text, output.format ?? '', file);
    } catch (e) {
      value = await unreadable(e);
    }
    values[registryKey(output.id)] = value;
    if (output.sensitive) {
      sensitive.push(output.id);
      options.redactor.add(value);
      if (!options.dryRun) await confined(() => removeConfinedFile(kapp.cacheRoot, file, use));
    } else {
      recordable[output.id] = value;
    }
  }
  return { values, recordable, missing, sensitive };
}

/**
 * Delete the files of the kapp's sensitive outputs (those whose conditions hold) still on disk: after the kapp's
 * run, whatever its outcome, a step may have written one that was never loaded (a later step failed, the run was
 * cancelled). Never throws: a declaration that cannot be rendered has no file to delete.
 */
export async function removeSensitiveOutputFiles(stack: Stack, kapp: KappModel, vars: GoMap): Promise<void> {
  let declared: OutputConfig[];
  try {
    declared = stack.render(kapp, kapp.descriptor.outputs ?? [], vars, 'outputs');
  } catch {
    return;
  }
  for (const output of declared) {
    if (!output.sensitive || !output.path) continue;
    try {
      const site = { kapp: kapp.id, owner: `output '${output.id}'` };
      if (!evaluateConditions(output.conditions ?? [], site)) continue;
      await removeConfinedFile(kapp.cacheRoot, path.resolve(kapp.configDir, output.path), {
        kapp: kapp.id,
        field: `output '${output.id}' path`,
      });
    } catch {
      // Conditions that cannot be evaluated, a path that is a directory or outside the kapp's directory: nothing
      // kapps wrote to delete.
    }
  }
}
