/**
 * Before anything runs: every command the run's steps will run must exist (on PATH, or relative to the step's
 * working directory). Every phase a kapp's visit runs is checked, the output phase of kapps that provide their
 * outputs included. Steps whose conditions are already false when planned are not checked; a command that only
 * appears once outputs exist cannot be checked in advance and is checked when its step is reached.
 */
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { parseGoBool } from '../plan/go-bool.js';
import type { Phase } from '../vocabulary.js';
import { resolutionKey, resolveCommand } from '../process/resolve-command.js';
import type { Stack } from '../stack/stack.js';
import { newGoMap } from '../go-value/value.js';
import type { RunOptions } from './types.js';

/** A step whose command is not there. */
export interface MissingStepCommand {
  readonly kapp: string;
  readonly phase: Phase;
  readonly step: string;
  readonly command: string;
  /** `on PATH` or `relative to <dir>`. */
  readonly where: string;
}

/**
 * The commands of the run's steps that cannot be found, in stack then step order. `phases` gives each kapp's
 * phases (see `plannedPhases`). With `pathOnly` (a dry run: the workspace may not be filled) only bare command
 * names are looked up. Planning errors are left for the run to report.
 */
export function checkCommands(
  stack: Stack,
  options: Pick<RunOptions, 'env'>,
  phases: ReadonlyMap<string, readonly Phase[]>,
  check: { pathOnly?: boolean } = {},
): MissingStepCommand[] {
  const views = stack.placeholderViews();
  const missing: MissingStepCommand[] = [];
  // Each command looked up once per check: a big stack's kapps mostly run the same few tools.
  const found = new Map<string, boolean>();
  for (const node of stack.selection.nodes) {
    const kappPhases = phases.get(node.id);
    if (!kappPhases) continue;
    const kapp = stack.kapp(node.id);
    for (const phase of kappPhases) {
      let steps;
      try {
        steps = stack.planPhase(kapp, phase, { outputs: views.get(node.id) ?? newGoMap() }, false, false);
      } catch (e) {
        if (e instanceof ConfigError) continue;
        throw e;
      }
      for (const step of steps) {
        if (step.conditions.some((c) => parseGoBool(c) !== true)) continue;
        if (step.command === '' || step.command.includes('<no value>')) continue;
        if (check.pathOnly && step.command.includes('/')) continue;
        const search = { cwd: step.workingDir, pathEnv: step.env.PATH ?? options.env.PATH };
        const key = resolutionKey(step.command, search);
        let ok = found.get(key);
        if (ok === undefined) {
          ok = resolveCommand(step.command, search) !== undefined;
          found.set(key, ok);
        }
        if (ok) continue;
        missing.push({
          kapp: node.id,
          phase,
          step: step.name,
          command: step.command,
          where: step.command.includes('/') ? `relative to ${step.workingDir}` : 'on PATH',
        });
      }
    }
  }
  return missing;
}

/**
 * In an apply (the stack opened with `applyNoValue`): the steps of the run that render `<no value>` in their command,
 * args, env or conditions, found before anything runs. Kapps that read outputs (their own or their dependencies')
 * are left to the check made when each phase is planned with the real outputs, since an output not produced yet
 * also renders `<no value>` here. Steps whose conditions are already false are not reported.
 */
export function noValueProblems(stack: Stack, phases: ReadonlyMap<string, readonly Phase[]>): Diagnostic[] {
  const views = stack.placeholderViews();
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const node of stack.selection.nodes) {
    const kappPhases = phases.get(node.id);
    const view = views.get(node.id) ?? newGoMap();
    if (!kappPhases || Object.keys(view).length > 0) continue;
    const kapp = stack.kapp(node.id);
    for (const phase of kappPhases) {
      const off: string[] = [];
      try {
        const steps = stack.planPhase(kapp, phase, { outputs: view }, false, false);
        for (const st of steps) {
          if (st.conditions.some((c) => parseGoBool(c) === false))
            off.push(`step '${st.name}' of run unit '${st.unit}' `);
        }
        for (const d of stack.noValueErrors(kapp, phase, steps)) {
          if (!d.message.includes('<no value>') || seen.has(d.message)) continue;
          if (off.some((prefix) => d.message.startsWith(prefix))) continue;
          seen.add(d.message);
          out.push(d);
        }
      } catch (e) {
        // Planning errors are reported by the run.
        if (!(e instanceof ConfigError)) throw e;
      }
    }
  }
  return out;
}
