/**
 * The vocabulary of a run: the names every layer uses for the phases of a kapp's run units and for how a step,
 * a kapp and a whole run ended. Configuration, planning, the stack model, the executor, the reporters and the
 * release records all speak it, so it lives here, at the root of `src/`, and imports nothing of kapps.
 *
 * These names are written in configuration files, printed by `--reporter json` and stored in release records:
 * add names, never rename or remove them.
 */

/** The six phases of a kapp's run units, in the order they are declared in a run unit. */
export const PHASES = ['plan_install', 'apply_install', 'plan_delete', 'apply_delete', 'output', 'clean'] as const;

/** One of the six phases of a kapp's run units (`run_units.<name>.<phase>`). */
export type Phase = (typeof PHASES)[number];

/**
 * How a step ended:
 * - `succeeded`: exit code as expected;
 * - `failed`: wrong exit code, spawn error or timeout, and the failure stops the kapp;
 * - `ignored`: failed, but `ignore_errors` (or `--ignore-errors`) let the kapp go on;
 * - `skipped`: its conditions were false;
 * - `cancelled`: stopped by SIGINT/SIGTERM.
 */
export const STEP_STATUSES = ['succeeded', 'failed', 'ignored', 'skipped', 'cancelled'] as const;

/** How a step ended (see `STEP_STATUSES`). */
export type StepStatus = (typeof STEP_STATUSES)[number];

/** How a kapp's visit ended. */
export type KappStatus = 'succeeded' | 'failed' | 'skipped' | 'cancelled';

/** How a whole run ended. */
export type RunStatus = 'succeeded' | 'failed' | 'cancelled';

/** Why a kapp is visited: `selected`, or `outputs` for an unselected ancestor that only provides its outputs. */
export type KappRole = 'selected' | 'outputs';
