/**
 * `kapps validate`: every phase of every processed kapp is planned (so call, name and condition errors show up),
 * and every executable a kapp needs is looked up: each planned step's command and `binaries`, and the `binaries` of
 * each run unit whose conditions hold (on PATH, or relative to the step's working directory for a path).
 */
import { resolveCommand } from '../process/resolve-command.js';
import { PHASES, type Phase } from '../vocabulary.js';
import { ConfigError } from '../diagnostics/errors.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { evaluateConditions } from '../plan/go-bool.js';
import { newGoMap } from '../go-value/value.js';
import type { Stack } from './stack.js';
import { uniqueDiagnostics } from './unique-diagnostics.js';

/** An executable that was not found. */
export interface MissingCommand {
  readonly kapp: string;
  /** The phase and step that need it; absent for a run unit's `binaries`. */
  readonly phase?: Phase;
  readonly step?: string;
  /** The run unit. */
  readonly unit: string;
  /** The command or binary as written ('' when the step names no command). */
  readonly command: string;
  readonly kind: 'command' | 'binary';
}

/** A kapp that was checked. */
export interface ValidatedKapp {
  readonly id: string;
  /** Its `requires` list. */
  readonly requires: readonly string[];
  /** `name (path)` of every executable found, in the order first needed. */
  readonly found: readonly string[];
}

/** What `validateStack` found. */
export interface ValidationReport {
  /** Kapps checked (those the selection processes), in stack order. */
  readonly kapps: readonly ValidatedKapp[];
  readonly missing: readonly MissingCommand[];
  /** Planning problems (names, calls, conditions, arguments). */
  readonly problems: readonly Diagnostic[];
}

/** Check the processed kapps of the selection; `pathEnv` is the PATH commands would run with. */
export function validateStack(stack: Stack, pathEnv: string | undefined): ValidationReport {
  const views = stack.placeholderViews();
  const missing: MissingCommand[] = [];
  const problems: Diagnostic[] = [];
  const kapps: ValidatedKapp[] = [];
  for (const node of stack.selection.nodes) {
    if (!node.processed) continue;
    const kapp = stack.kapp(node.id);
    const runtime = { outputs: views.get(node.id) ?? newGoMap(), planOnly: true };
    const seen = new Map<string, boolean>();
    const found: string[] = [];
    // Each executable is looked up (and reported) once per kapp and, for a relative path, working directory.
    const check = (command: string, cwd: string, missingItem: MissingCommand): void => {
      const key = `${command}\u0000${command.includes('/') ? cwd : ''}`;
      if (seen.has(key)) return;
      const where = resolveCommand(command, { cwd, pathEnv });
      seen.set(key, where !== undefined);
      if (where) found.push(`${command} (${where})`);
      else missing.push(missingItem);
    };
    for (const phase of PHASES) {
      let steps;
      try {
        steps = stack.planPhase(kapp, phase, runtime, false);
        problems.push(...stack.stepConditionProblems(steps));
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems.push(...e.diagnostics);
        continue;
      }
      for (const step of steps) {
        const at = { kapp: node.id, phase, step: step.name, unit: step.unit };
        check(step.command, step.workingDir, { ...at, command: step.command, kind: 'command' });
        for (const b of step.binaries) check(b, step.workingDir, { ...at, command: b, kind: 'binary' });
      }
    }
    try {
      for (const unit of stack.renderedRunUnits(kapp, runtime, 'plan_install', false)) {
        if (
          !unit.binaries?.length ||
          !evaluateConditions(unit.conditions ?? [], { kapp: node.id, owner: `run unit '${unit.name}'` })
        ) {
          continue;
        }
        for (const b of unit.binaries)
          check(b, kapp.cacheRoot, { kapp: node.id, unit: unit.name, command: b, kind: 'binary' });
      }
    } catch (e) {
      // Already reported while planning the phases.
      if (!(e instanceof ConfigError)) throw e;
    }
    kapps.push({ id: node.id, requires: kapp.descriptor.requires ?? [], found });
  }
  return { kapps, missing, problems: uniqueDiagnostics(problems) };
}
