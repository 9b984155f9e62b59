/**
 * sprig v3.2.3's regular-expression functions, with Go (RE2) syntax and semantics (see regexp.ts). The plain
 * forms panic on a bad pattern (`regexp: Compile(`[`): error parsing regexp: ...`), except `regexMatch`, which
 * returns false; the `must*` forms return the parse error.
 */
import { canBackquote, quoteGo } from '../fmt.js';
import { FuncError } from '../types.js';
import type { GoValue } from '../../go-value/value.js';
import { def, type FuncTable, intNum, str, stringList } from './define.js';
import { nilSlice } from './go-json.js';
import { compileRegexp, type GoRegexp, quoteMeta } from './regexp.js';
import { RegexpSyntaxError } from './regexp-syntax.js';

const S = 'string';

/** Compile for a must* function: a bad pattern is the function's error. */
function compileOrError(expr: string): GoRegexp {
  try {
    return compileRegexp(expr);
  } catch (e) {
    if (e instanceof RegexpSyntaxError) throw new FuncError(e.message);
    throw e;
  }
}

/** regexp.MustCompile: a bad pattern is a panic with Go's text. */
function mustCompile(expr: string): GoRegexp {
  try {
    return compileRegexp(expr);
  } catch (e) {
    if (e instanceof RegexpSyntaxError) {
      const q = canBackquote(expr) ? '`' + expr + '`' : quoteGo(expr);
      throw new FuncError(`regexp: Compile(${q}): ${e.message}`, true);
    }
    throw e;
  }
}

function strings(list: string[] | null): GoValue {
  return list === null ? nilSlice(stringList([])) : stringList(list);
}

/** sprig's regex functions by name. */
export function regexFuncs(): FuncTable {
  const t: FuncTable = {
    regexMatch: def([S, S], (a) => {
      try {
        return compileRegexp(str(a, 0)).matchString(str(a, 1));
      } catch (e) {
        if (e instanceof RegexpSyntaxError) return false;
        throw e;
      }
    }),
    mustRegexMatch: def([S, S], (a) => compileOrError(str(a, 0)).matchString(str(a, 1))),
    regexQuoteMeta: def([S], (a) => quoteMeta(str(a, 0))),
  };
  const both = (name: string, params: string[], impl: (re: GoRegexp, a: GoValue[]) => GoValue): void => {
    t[name] = def(params, (a) => impl(mustCompile(str(a, 0)), a));
    t['must' + name[0]?.toUpperCase() + name.slice(1)] = def(params, (a) => impl(compileOrError(str(a, 0)), a));
  };
  both('regexFindAll', [S, S, 'int'], (re, a) => strings(re.findAllString(str(a, 1), intNum(a, 2))));
  both('regexFind', [S, S], (re, a) => re.findString(str(a, 1)));
  both('regexReplaceAll', [S, S, S], (re, a) => re.replaceAllString(str(a, 1), str(a, 2)));
  both('regexReplaceAllLiteral', [S, S, S], (re, a) => re.replaceAllLiteralString(str(a, 1), str(a, 2)));
  both('regexSplit', [S, S, 'int'], (re, a) => strings(re.split(str(a, 1), intNum(a, 2))));
  return t;
}
