/**
 * Loading a kapp's declared outputs from the files its steps wrote: each output whose conditions hold is read
 * from `path` (relative to the kapp's config directory), parsed as json, yaml or text, and, when `sensitive`,
 * deleted right after and remembered by the redactor.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
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
import { ConfinementError, confinedReadPath, removeConfinedFile } from '../workspace/confine.js';
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

/**
 * Load the outputs. `mustExist`: a missing or empty file is an error (after an install); otherwise it is passed
 * over. Never deletes anything in a dry run.
 */
export function loadOutputs(
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
): LoadedOutputs {
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
    const confined = <T>(f: () => T): T => {
      try {
        return f();
      } catch (e) {
        if (!(e instanceof ConfinementError)) throw e;
        throw new ConfigError([diagnosticError(e.message, locationOf(output, 'path') ?? locationOf(output))]);
      }
    };
    const file = path.resolve(kapp.configDir, output.path);
    const readFrom = confined(() => confinedReadPath(kapp.cacheRoot, file, use));
    const empty = !existsSync(readFrom) || statSync(readFrom).size === 0;
    if (empty) {
      if (options.mustExist) {
        throw new KappsError(
          `kapp ${kapp.id}: output '${output.id}' was not produced: ${file} ${existsSync(file) ? 'is empty' : 'does not exist'} after the install`,
        );
      }
      missing.push(output.id);
      continue;
    }
    let value: GoValue;
    try {
      value = parseOutputFile(readFileSync(readFrom, 'utf8'), output.format ?? '', file);
    } catch (e) {
      // A sensitive file is deleted whether or not it could be read.
      if (output.sensitive && !options.dryRun) confined(() => removeConfinedFile(kapp.cacheRoot, file, use));
      const detail =
        e instanceof ConfigError
          ? e.diagnostics.map((d) => d.message).join('; ')
          : e instanceof Error
            ? e.message
            : String(e);
      throw new KappsError(`kapp ${kapp.id}: cannot read output '${output.id}' from ${file}: ${detail}`);
    }
    values[registryKey(output.id)] = value;
    if (output.sensitive) {
      sensitive.push(output.id);
      options.redactor.add(value);
      if (!options.dryRun) confined(() => removeConfinedFile(kapp.cacheRoot, file, use));
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
export function removeSensitiveOutputFiles(stack: Stack, kapp: KappModel, vars: GoMap): void {
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
      removeConfinedFile(kapp.cacheRoot, path.resolve(kapp.configDir, output.path), {
        kapp: kapp.id,
        field: `output '${output.id}' path`,
      });
    } catch {
      // Conditions that cannot be evaluated, a path that is a directory or outside the kapp's directory: nothing
      // kapps wrote to delete.
    }
  }
}
