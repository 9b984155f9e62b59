/**
 * `kapps validate`: every phase of every processed kapp is planned (so call, name and condition errors show up), and
 * every command and binary a step names is looked up on PATH (or relative to the step's working directory).
 */
import { resolveCommand } from '../run/resolve-command.js';
import { PHASES, type Phase } from '../report/events.js';
import { ConfigError } from '../diagnostics/errors.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { newGoMap } from '../template/value.js';
import { uniqueDiagnostics, type Stack } from './stack.js';

export interface MissingCommand {
  readonly kapp: string;
  readonly phase: Phase;
  readonly step: string;
  /** The command or binary as written ('' when the step names no command). */
  readonly command: string;
  readonly kind: 'command' | 'binary';
}

export interface ValidationReport {
  /** Kapps checked, in stack order, with the executables each needs. */
  readonly kapps: readonly { id: string; requires: readonly string[]; found: readonly string[] }[];
  readonly missing: readonly MissingCommand[];
  /** Planning problems (names, calls, conditions). */
  readonly problems: readonly Diagnostic[];
}

/** Check the processed kapps of the selection. */
export function validateStack(stack: Stack, pathEnv: string | undefined): ValidationReport {
  const views = stack.placeholderViews();
  const missing: MissingCommand[] = [];
  const problems: Diagnostic[] = [];
  const kapps: { id: string; requires: string[]; found: string[] }[] = [];
  for (const node of stack.selection.nodes) {
    if (!node.processed) continue;
    const kapp = stack.kapp(node.id);
    const seen = new Map<string, boolean>();
    const found: string[] = [];
    for (const phase of PHASES) {
      let steps;
      try {
        steps = stack.planPhase(kapp, phase, { outputs: views.get(node.id) ?? newGoMap() }, false);
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems.push(...e.diagnostics);
        continue;
      }
      for (const step of steps) {
        const wanted: [string, 'command' | 'binary'][] = [
          [step.command, 'command'],
          ...step.binaries.map((b) => [b, 'binary'] as [string, 'binary']),
        ];
        for (const [command, kind] of wanted) {
          const key = `${command}\0${command.includes('/') ? step.workingDir : ''}`;
          let ok = seen.get(key);
          if (ok === undefined) {
            const where = resolveCommand(command, { cwd: step.workingDir, pathEnv });
            ok = where !== undefined;
            seen.set(key, ok);
            if (where) found.push(`${command} (${where})`);
          }
          if (!ok) missing.push({ kapp: node.id, phase, step: step.name, command, kind });
        }
      }
    }
    kapps.push({ id: node.id, requires: kapp.descriptor.requires ?? [], found });
  }
  return { kapps, missing, problems: uniqueDiagnostics(problems) };
}
