/**
 * The contract between the engine (lexer, parser, executor in `src/template/`) and the function library
 * (`src/template/funcs/`): a function declares its Go signature and the engine checks and converts arguments the
 * way text/template does (reflect assignability, untyped constants, `wrong type for value; expected X; got Y`).
 */
import type { GoValue } from '../go-value/value.js';
import type { SensitivityWatch } from './sensitivity.js';

/**
 * A Go type name exactly as reflect prints it: `interface {}`, `string`, `int`, `int64`, `float64`, `bool`,
 * `[]interface {}`, `[]string`, `map[string]interface {}`, `uint32`, ...
 */
export type GoType = string;

/** What a function may read from the outside world (only the Sugarkube file functions and `env` need it). */
export interface FuncContext {
  /** Environment lookup for `env` / `expandenv`. */
  getEnv(name: string): string | undefined;
  /** The directory relative paths of `exists` and `findFiles` start from (outside a run: this process's). */
  readonly cwd?: string;
  /**
   * The directories (absolute, symbolic links resolved) `exists` and `findFiles` may look in; a path elsewhere is a
   * template error. Undefined: anywhere.
   */
  readonly readRoots?: readonly string[];
  /** Where values computed from sensitive values are reported, while a run watches (see `sensitivity.ts`). */
  readonly watch?: SensitivityWatch;
}

export interface FuncDef {
  /** Parameter types of the Go signature (excluding a variadic tail). */
  readonly params: readonly GoType[];
  /** Element type of a variadic tail (Go `...T`), if the function is variadic. */
  readonly variadic?: GoType;
  /**
   * The implementation. It receives arguments already checked against `params`/`variadic`.
   * To return Go's `(value, error)` error, throw `FuncError`; a Go panic inside the function is also a
   * `FuncError` with `panic: true` (text/template reports both as `error calling NAME: MESSAGE`).
   */
  readonly fn: (args: GoValue[], ctx: FuncContext) => GoValue;
}

export type FuncMap = ReadonlyMap<string, FuncDef>;

/** An error returned (or panicked) by a template function. The engine adds the template position and name. */
export class FuncError extends Error {
  constructor(
    message: string,
    readonly panic = false,
  ) {
    super(message);
    this.name = 'FuncError';
  }
}
