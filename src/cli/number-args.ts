/** Numeric options checked when the command line is parsed: a wrong value is a usage error (exit 2). */
import { UsageError } from '../diagnostics/errors.js';

/**
 * A yargs `coerce` for a number option: `integer` asks for a whole number; `min` is the smallest allowed value.
 * The option is declared without a yargs type, so the value arrives as written and the message can quote it.
 */
export function numberArg(flag: string, options: { integer: boolean; min: number }): (value: unknown) => number {
  return (value: unknown): number => {
    const last: unknown = Array.isArray(value) ? value[value.length - 1] : value;
    const text = typeof last === 'number' ? String(last) : typeof last === 'string' ? last.trim() : '';
    const n = text === '' ? Number.NaN : Number(text);
    const kind = options.integer ? 'a whole number' : 'a number';
    if (!Number.isFinite(n) || (options.integer && !Number.isInteger(n)) || n < options.min) {
      throw new UsageError(`--${flag} must be ${kind} ≥ ${String(options.min)}, got '${text}'`);
    }
    return n;
  };
}
