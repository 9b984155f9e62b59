/**
 * Small helpers to declare template functions with their Go signatures.
 */
import type { FuncContext, FuncDef, GoType } from '../types.js';
import type { GoValue } from '../../go-value/value.js';
import { tagType } from '../../go-value/value.js';

/** Go's `interface {}` as reflect prints it. */
export const ANY = 'interface {}';
/** Go's `map[string]interface {}`. */
export const MAP = 'map[string]interface {}';

/** A family of functions by name. */
export type FuncTable = Record<string, FuncDef>;

/** A function with fixed parameters. */
export function def(params: readonly GoType[], fn: (args: GoValue[], ctx: FuncContext) => GoValue): FuncDef {
  return { params, fn };
}

/** A variadic function: `params` then any number of `variadic` arguments (Go's `...T`). */
export function variadic(
  params: readonly GoType[],
  tail: GoType,
  fn: (args: GoValue[], ctx: FuncContext) => GoValue,
): FuncDef {
  return { params, variadic: tail, fn };
}

/** A Go `[]string` result. */
export function stringList(items: string[]): GoValue[] {
  return tagType(items as GoValue[], '[]string');
}

/** Argument `i` as a string (the engine has checked the Go type). */
export function str(args: readonly GoValue[], i: number): string {
  const v = args[i];
  return typeof v === 'string' ? v : '';
}

/** Argument `i` as a Go int (bigint; the engine has checked the Go type). */
export function int(args: readonly GoValue[], i: number): bigint {
  const v = args[i];
  return typeof v === 'bigint' ? v : 0n;
}

/** Argument `i` as a JavaScript number, for ints used as sizes and counts. */
export function intNum(args: readonly GoValue[], i: number): number {
  return Number(int(args, i));
}

/** Argument `i` as a bool. */
export function bool(args: readonly GoValue[], i: number): boolean {
  return args[i] === true;
}
