/**
 * sprig v3.2.3's defaults, flow control and reflection helpers: `default`, `empty`, `coalesce`, `all`, `any`,
 * `ternary`, `fail`, `typeOf`, `typeIs`, `typeIsLike`, `kindOf`, `kindIs`, `deepEqual`.
 */
import { FuncError } from '../types.js';
import { goTypeName } from '../../go-value/value.js';
import { ANY, bool, def, type FuncTable, str, variadic } from './define.js';
import { deepEqual, isEmptyValue, kindOf } from './go-reflect.js';

const S = 'string';

/** sprig's typeOf: fmt's %T (`<nil>` for nil). */
function typeOf(v: Parameters<typeof goTypeName>[0]): string {
  return goTypeName(v);
}

/** sprig's defaults, flow-control and reflection functions by name. */
export function flowFuncs(): FuncTable {
  return {
    default: variadic([ANY], ANY, (a) => {
      const given = a.slice(1);
      if (given.length === 0 || isEmptyValue(given[0] ?? null)) return a[0] ?? null;
      return given[0] ?? null;
    }),
    empty: def([ANY], (a) => isEmptyValue(a[0] ?? null)),
    coalesce: variadic([], ANY, (a) => a.find((v) => !isEmptyValue(v)) ?? null),
    all: variadic([], ANY, (a) => a.every((v) => !isEmptyValue(v))),
    any: variadic([], ANY, (a) => a.some((v) => !isEmptyValue(v))),
    ternary: def([ANY, ANY, 'bool'], (a) => (bool(a, 2) ? (a[0] ?? null) : (a[1] ?? null))),
    fail: def([S], (a) => {
      throw new FuncError(str(a, 0));
    }),
    typeOf: def([ANY], (a) => typeOf(a[0] ?? null)),
    typeIs: def([S, ANY], (a) => str(a, 0) === typeOf(a[1] ?? null)),
    typeIsLike: def([S, ANY], (a) => {
      const t = typeOf(a[1] ?? null);
      return str(a, 0) === t || '*' + str(a, 0) === t;
    }),
    kindOf: def([ANY], (a) => kindOf(a[0] ?? null)),
    kindIs: def([S, ANY], (a) => str(a, 0) === kindOf(a[1] ?? null)),
    deepEqual: def([ANY, ANY], (a) => deepEqual(a[0] ?? null, a[1] ?? null)),
  };
}
