/**
 * sprig v3.2.3's environment, path, URL, semver and random functions. `env`/`expandenv` read the environment
 * through the render context; the random functions are non-deterministic by design.
 */
import type * as Crypto from 'node:crypto';
import { checkResultSize } from '../limits.js';
import { FuncError } from '../types.js';
import type { GoValue } from '../../go-value/value.js';
import { isGoMap, newGoMap } from '../../go-value/value.js';
import { def, type FuncTable, intNum, MAP, str } from './define.js';
import { basePath, cleanPath, dirPath, extPath, isAbsPath } from './go-path.js';
import { kindOf, NIL_DEREFERENCE } from './go-reflect.js';
import { makeURL, parseURL, URLError, urlField, urlHostname, urlString, urlUserString } from './go-url.js';
import { checkConstraints, parseConstraints, parseVersion, versionValue } from './semver.js';

const S = 'string';
const I = 'int';

/** os.Expand: `$NAME`, `${NAME}` and the shell's one-character specials; bad `${` syntax is dropped. */
export function expandEnv(s: string, lookup: (name: string) => string): string {
  const special = (c: string | undefined): boolean => c !== undefined && '*#$@!?-0123456789'.includes(c);
  const alnum = (c: string | undefined): boolean => c !== undefined && /^[A-Za-z0-9_]$/.test(c);
  let out = '';
  let i = 0;
  let changed = false;
  for (let j = 0; j < s.length; j++) {
    if (s[j] !== '$' || j + 1 >= s.length) continue;
    changed = true;
    out += s.slice(i, j);
    const rest = s.slice(j + 1);
    let name = '';
    let w = 0;
    if (rest[0] === '{') {
      if (rest.length > 2 && special(rest[1]) && rest[2] === '}') {
        name = rest[1] ?? '';
        w = 3;
      } else {
        const close = rest.indexOf('}', 1);
        if (close === 1) w = 2;
        else if (close < 0) w = 1;
        else {
          name = rest.slice(1, close);
          w = close + 1;
        }
      }
    } else if (special(rest[0])) {
      name = rest[0] ?? '';
      w = 1;
    } else {
      while (w < rest.length && alnum(rest[w])) w++;
      name = rest.slice(0, w);
    }
    if (name === '' && w > 0) {
      // Invalid syntax: the characters are eaten.
    } else if (name === '') out += '$';
    else out += lookup(name);
    j += w;
    i = j + 1;
  }
  return changed ? out + s.slice(i) : s;
}

/** sprig's dictGetOrEmpty: a string field of urlJoin's dict, "" when absent. */
function urlPart(d: Record<string, GoValue>, key: string): string {
  if (!Object.prototype.hasOwnProperty.call(d, key)) return '';
  const v = d[key] ?? null;
  if (v === null) throw new FuncError(NIL_DEREFERENCE, true);
  if (typeof v !== 'string') {
    throw new FuncError(`unable to parse ${key} key, must be of type string, but ${kindOf(v)} found`, true);
  }
  return v;
}

function urlParse(s: string): GoValue {
  let u;
  try {
    u = parseURL(s);
  } catch (e) {
    if (e instanceof URLError) throw new FuncError(`unable to parse url: ${e.message}`, true);
    throw e;
  }
  return newGoMap([
    ['scheme', urlField(u, 'scheme')],
    ['host', urlField(u, 'host')],
    ['hostname', urlHostname(u)],
    ['path', urlField(u, 'path')],
    ['query', urlField(u, 'rawQuery')],
    ['opaque', urlField(u, 'opaque')],
    ['fragment', urlField(u, 'fragment')],
    ['userinfo', urlUserString(u)],
  ]);
}

function urlJoin(d: Record<string, GoValue>): string {
  const fields = {
    scheme: urlPart(d, 'scheme'),
    host: urlPart(d, 'host'),
    path: urlPart(d, 'path'),
    rawQuery: urlPart(d, 'query'),
    opaque: urlPart(d, 'opaque'),
    fragment: urlPart(d, 'fragment'),
  };
  const userinfo = urlPart(d, 'userinfo');
  let user = null;
  if (userinfo !== '') {
    try {
      user = parseURL(`proto://${userinfo}@host`).user;
    } catch (e) {
      if (e instanceof URLError) throw new FuncError(`unable to parse userinfo in dict: ${e.message}`, true);
      throw e;
    }
  }
  return urlString(makeURL({ ...fields, user }));
}

/** node:crypto, loaded by the first function that needs it, not with the module (milliseconds of every command). */
const crypto = (): typeof Crypto => process.getBuiltinModule('node:crypto');

const ALPHA = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';

/** A random string of `count` characters from `chars` ("" for a negative count, as sprig ignores the error). */
function randomString(count: number, chars: string): string {
  if (count <= 0) return '';
  checkResultSize(count);
  const { randomInt } = crypto();
  let out = '';
  for (let i = 0; i < count; i++) out += chars[randomInt(chars.length)] ?? '';
  return out;
}

let asciiChars: string | undefined;

/** sprig's environment, path, URL, semver and random functions by name. */
export function systemFuncs(): FuncTable {
  asciiChars ??= Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');
  const ascii = asciiChars;
  return {
    env: def([S], (a, ctx) => ctx.getEnv(str(a, 0)) ?? ''),
    expandenv: def([S], (a, ctx) => expandEnv(str(a, 0), (n) => ctx.getEnv(n) ?? '')),
    base: def([S], (a) => basePath(str(a, 0))),
    dir: def([S], (a) => dirPath(str(a, 0))),
    clean: def([S], (a) => cleanPath(str(a, 0))),
    ext: def([S], (a) => extPath(str(a, 0))),
    isAbs: def([S], (a) => isAbsPath(str(a, 0))),
    osBase: def([S], (a) => basePath(str(a, 0))),
    osDir: def([S], (a) => dirPath(str(a, 0))),
    osClean: def([S], (a) => cleanPath(str(a, 0))),
    osExt: def([S], (a) => extPath(str(a, 0))),
    osIsAbs: def([S], (a) => isAbsPath(str(a, 0))),
    urlParse: def([S], (a) => urlParse(str(a, 0))),
    urlJoin: def([MAP], (a) => {
      const d = a[0];
      return urlJoin(d !== undefined && d !== null && isGoMap(d) ? d : newGoMap());
    }),
    semver: def([S], (a) => versionValue(parseVersion(str(a, 0)))),
    semverCompare: def([S, S], (a) => {
      const c = parseConstraints(str(a, 0));
      return checkConstraints(c, parseVersion(str(a, 1)));
    }),
    uuidv4: def([], () => crypto().randomUUID()),
    randAlphaNum: def([I], (a) => randomString(intNum(a, 0), ALPHA + DIGITS)),
    randAlpha: def([I], (a) => randomString(intNum(a, 0), ALPHA)),
    randAscii: def([I], (a) => randomString(intNum(a, 0), ascii)),
    randNumeric: def([I], (a) => randomString(intNum(a, 0), DIGITS)),
    randBytes: def([I], (a) => {
      const n = intNum(a, 0);
      if (n < 0) throw new FuncError('runtime error: makeslice: len out of range', true);
      return crypto().randomBytes(n).toString('base64');
    }),
    shuffle: def([S], (a) => {
      const chars = Array.from(str(a, 0));
      const { randomInt } = crypto();
      for (let i = chars.length - 1; i > 0; i--) {
        const j = randomInt(i + 1);
        [chars[i], chars[j]] = [chars[j] ?? '', chars[i] ?? ''];
      }
      return chars.join('');
    }),
  };
}
