/**
 * Rendering a kapp's templates (`templates.<id>: {source, dest, conditions, sensitive}`): the source is found
 * relative to the kapp's config directory, then in each of the stack's `template_dirs`; the destination is relative
 * to the config directory. Nothing is written in a dry run. Sensitive templates are deleted after the kapp's run.
 * A source larger than MAX_TEMPLATE_SOURCE_BYTES is refused. Files are read and written without blocking.
 */
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { locationOf } from '../config/locations.js';
import { ConfigError } from '../diagnostics/errors.js';
import { error as diagnosticError } from '../diagnostics/diagnostic.js';
import type { KappModel } from '../stack/kapp-model.js';
import type { Stack } from '../stack/stack.js';
import { renderTemplate, TemplateError } from '../template/index.js';
import type { GoMap } from '../go-value/value.js';
import { checkConfined, ConfinementError, readFileUpTo, writeConfinedFile } from '../workspace/confine.js';

export interface RenderedTemplates {
  /** Template id → absolute path written (or that would be written). */
  readonly paths: Map<string, string>;
  /** Paths of sensitive templates, to delete when the kapp is done. */
  readonly sensitive: string[];
}

/** Bytes of a template's source kapps reads. */
export const MAX_TEMPLATE_SOURCE_BYTES = 8 * 1024 * 1024;

/** Render the templates of a kapp whose conditions hold. */
export async function renderKappTemplates(
  stack: Stack,
  kapp: KappModel,
  vars: GoMap,
  options: { dryRun: boolean },
): Promise<RenderedTemplates> {
  const paths = new Map<string, string>();
  const sensitive: string[] = [];
  try {
    await renderEach(stack, kapp, vars, options, paths, sensitive);
  } catch (e) {
    // The caller never hears of the sensitive files written before the failure: delete them now.
    if (!options.dryRun) {
      try {
        await removeSensitiveTemplates(sensitive);
      } catch {
        // A dest that cannot be removed (a directory) could not be written either: the first error says why.
      }
    }
    throw e;
  }
  return { paths, sensitive };
}

async function renderEach(
  stack: Stack,
  kapp: KappModel,
  vars: GoMap,
  options: { dryRun: boolean },
  paths: Map<string, string>,
  sensitive: string[],
): Promise<void> {
  for (const [id, target] of stack.templateTargets(kapp, vars)) {
    const at = locationOf(target.template, 'source') ?? locationOf(target.template);
    if (target.source === '') {
      throw new ConfigError([diagnosticError(`kapp ${kapp.id}: template '${id}' has no source`, at)]);
    }
    const candidates = templateSourceCandidates(stack, kapp, target.source, options.dryRun);
    // The first candidate that exists; `source` is the one being read when reading fails.
    let source = target.source;
    const failed = (e: unknown): ConfigError => {
      const detail = e instanceof TemplateError ? e.message : e instanceof Error ? e.message : String(e);
      return new ConfigError([diagnosticError(`kapp ${kapp.id}: template '${id}' (${source}): ${detail}`, at)]);
    };
    let text: string | undefined;
    try {
      for (const candidate of candidates) {
        source = candidate;
        text = await readFileUpTo(candidate, MAX_TEMPLATE_SOURCE_BYTES, 'the source');
        if (text !== undefined) break;
      }
    } catch (e) {
      throw failed(e);
    }
    if (text === undefined) {
      throw new ConfigError([
        diagnosticError(
          `kapp ${kapp.id}: template '${id}': source ${target.source} not found (looked in ${candidates.join(', ')})`,
          at,
        ),
      ]);
    }
    let content: string;
    try {
      content = renderTemplate(text, vars, { name: path.basename(source) });
    } catch (e) {
      throw failed(e);
    }
    paths.set(id, target.dest);
    if (target.template.sensitive) {
      sensitive.push(target.dest);
      if (!options.dryRun) liveSensitive.add(target.dest);
    }
    const use = { kapp: kapp.id, field: `template '${id}' dest` };
    try {
      if (options.dryRun) await checkConfined(kapp.cacheRoot, target.dest, use);
      else
        await writeConfinedFile(kapp.cacheRoot, target.dest, content, target.template.sensitive ? 0o600 : 0o644, use);
    } catch (e) {
      if (!(e instanceof ConfinementError)) throw e;
      throw new ConfigError([diagnosticError(e.message, locationOf(target.template, 'dest') ?? at)]);
    }
  }
}

/**
 * Where a template's source may be, in the order looked at: the kapp's config directory, then `template_dirs`. With
 * `original`, a file source's original folder comes first: what the next sync copies, where the copy may be stale.
 */
export function templateSourceCandidates(
  stack: Stack,
  kapp: KappModel,
  source: string,
  dryRun: boolean,
  original = false,
): string[] {
  if (path.isAbsolute(source)) return [source];
  const originalDir = kapp.configFile ? path.dirname(kapp.configFile) : undefined;
  return [
    ...(original && originalDir && originalDir !== kapp.configDir ? [path.resolve(originalDir, source)] : []),
    path.resolve(kapp.configDir, source),
    // A dry run fills no workspace: a file source's copy may not be there yet, its original is.
    ...(dryRun && kapp.configFile && path.dirname(kapp.configFile) !== kapp.configDir
      ? [path.resolve(path.dirname(kapp.configFile), source)]
      : []),
    ...stack.config.template_dirs.map((d) => path.resolve(d, source)),
  ];
}

/**
 * Sensitive templates rendered and not deleted yet, in this process: what `removeAllSensitiveTemplates` deletes
 * when kapps must exit at once (a second Ctrl-C) without finishing the kapps that wrote them.
 */
const liveSensitive = new Set<string>();

/** Delete rendered sensitive templates. */
export async function removeSensitiveTemplates(files: readonly string[]): Promise<void> {
  for (const f of files) {
    await rm(f, { force: true });
    liveSensitive.delete(f);
  }
}

/** Delete every sensitive template still on disk, synchronously; for the last moments of the process. */
export function removeAllSensitiveTemplates(): void {
  for (const f of liveSensitive) {
    try {
      rmSync(f, { force: true });
    } catch {
      // Nothing more can be done while exiting.
    }
  }
  liveSensitive.clear();
}
