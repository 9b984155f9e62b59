/** Values the server configuration file's sections share: environment variable names and durations. */
import * as z from 'zod';

/** An environment variable's name. */
export const envNameSchema = z
  .string()
  .max(256)
  .regex(
    /^[A-Za-z_][A-Za-z0-9_]*$/,
    'an environment variable name: letters, digits and "_", not starting with a digit',
  );

/** A duration: a whole number and a unit, `30s`, `15m`, `6h`, `1d`. */
export const durationSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,5}(s|m|h|d)$/, 'a duration: a whole number and s, m, h or d (`30m`, `6h`, `1d`)');

/** Seconds of a duration the schema accepted (`30s`, `15m`, `6h`, `1d`). */
export function durationSeconds(text: string): number {
  const unit = text.slice(-1);
  const n = Number(text.slice(0, -1));
  return n * (unit === 'd' ? 86_400 : unit === 'h' ? 3600 : unit === 'm' ? 60 : 1);
}

/** A YAML path as a diagnostic names it: `projects[0].checks[1].url`. */
export function pathText(path: readonly (string | number)[]): string {
  return path.map((x, k) => (typeof x === 'number' ? `[${x}]` : k === 0 ? x : `.${x}`)).join('');
}
