/**
 * Semantic versions and constraints as Masterminds/semver v3.2.0 (sprig v3.2.3's `semver` and `semverCompare`)
 * reads and checks them: a lenient version syntax (`v1.2`, `1`), comparison with pre-release rules, and
 * constraints with `=`, `!=`, `>`, `<`, `>=`, `<=`, `~`, `^`, x-ranges, hyphen ranges, `,`/space for AND and
 * `||` for OR. Behaviour was read from that library; the code is written for kapps.
 */
import { FuncError } from '../types.js';
import { GoOpaque } from '../../go-value/value.js';
import { marshalsAsString } from './go-json.js';
import { compileRegexp, type GoRegexp } from './regexp.js';

/** A parsed version. */
export interface Version {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string;
  metadata: string;
  original: string;
}

// Go's \s is [\t\n\f\r ]; JavaScript's is wider, so spell it out.
const WS = '[\\t\\n\\f\\r ]';
const SEMVER = `v?([0-9]+)(\\.[0-9]+)?(\\.[0-9]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?`;
const CV = `v?([0-9|x|X|\\*]+)(\\.[0-9|x|X|\\*]+)?(\\.[0-9|x|X|\\*]+)?(-([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?(\\+([0-9A-Za-z\\-]+(\\.[0-9A-Za-z\\-]+)*))?`;
const OPS = `=||!=|>|<|>=|=>|<=|=<|~|~>|\\^`;

// The library's patterns are Go regular expressions: they run on RE2 (linear time), as in Go. Each is compiled on
// first use, not when the template functions load (compiling all five is a noticeable part of a command's start).
function once(expr: () => string): () => GoRegexp {
  let re: GoRegexp | undefined;
  return () => (re ??= compileRegexp(expr()));
}
const versionRegex = once(() => `^${SEMVER}$`);
const constraintRegex = once(() => `^${WS}*(${OPS})${WS}*(${CV})${WS}*$`);
const constraintRangeRegex = once(() => `${WS}*(${CV})${WS}+-${WS}+(${CV})${WS}*`);
const findConstraintRegex = once(() => `(${OPS})${WS}*(${CV})`);
const validConstraintRegex = once(
  () => `^(${WS}*(${OPS})${WS}*(${CV})${WS}*)((?:${WS}+|,${WS}*)(${OPS})${WS}*(${CV})${WS}*)*$`,
);

const UINT64_MAX = (1n << 64n) - 1n;
const ALLOWED = /^[0-9A-Za-z-]*$/;

/** The error semver.NewVersion gives for a string it cannot read. */
export const INVALID_SEMVER = 'Invalid Semantic Version';

function parseSegment(s: string): bigint {
  const n = BigInt(s);
  if (n > UINT64_MAX) {
    throw new FuncError(`Error parsing version segment: strconv.ParseUint: parsing "${s}": value out of range`);
  }
  return n;
}

function validatePrerelease(p: string): void {
  for (const part of p.split('.')) {
    if (/^[0-9]*$/.test(part)) {
      if (part.length > 1 && part[0] === '0') throw new FuncError('Version segment starts with 0');
    } else if (!ALLOWED.test(part)) throw new FuncError('Invalid Prerelease string');
  }
}

/** semver.NewVersion: throws FuncError with the library's message when `v` is not a version. */
export function parseVersion(v: string): Version {
  const m = versionRegex().findStringSubmatch(v);
  if (!m) throw new FuncError(INVALID_SEMVER);
  const version: Version = {
    major: parseSegment(m[1] ?? '0'),
    minor: m[2] ? parseSegment(m[2].slice(1)) : 0n,
    patch: m[3] ? parseSegment(m[3].slice(1)) : 0n,
    pre: m[5] ?? '',
    metadata: m[8] ?? '',
    original: v,
  };
  if (version.pre !== '') validatePrerelease(version.pre);
  return version;
}

/** Version.String(): `1.2.3-pre+meta`. */
export function versionString(v: Version): string {
  let s = `${v.major}.${v.minor}.${v.patch}`;
  if (v.pre !== '') s += `-${v.pre}`;
  if (v.metadata !== '') s += `+${v.metadata}`;
  return s;
}

function compareSegment(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function comparePrePart(s: string, o: string): number {
  if (s === o) return 0;
  if (s === '') return o !== '' ? -1 : 1;
  if (o === '') return s !== '' ? 1 : -1;
  const sNum = /^[0-9]+$/.test(s) && BigInt(s) <= UINT64_MAX;
  const oNum = /^[0-9]+$/.test(o) && BigInt(o) <= UINT64_MAX;
  if (!sNum && !oNum) return s > o ? 1 : -1;
  if (!oNum) return -1;
  if (!sNum) return 1;
  return BigInt(s) > BigInt(o) ? 1 : -1;
}

function comparePrerelease(v: string, o: string): number {
  const sp = v.split('.');
  const op = o.split('.');
  const l = Math.max(sp.length, op.length);
  for (let i = 0; i < l; i++) {
    const d = comparePrePart(sp[i] ?? '', op[i] ?? '');
    if (d !== 0) return d;
  }
  return 0;
}

/** Version.Compare: -1, 0 or 1 (metadata ignored; a pre-release sorts before its release). */
export function compareVersions(v: Version, o: Version): number {
  const d = compareSegment(v.major, o.major) || compareSegment(v.minor, o.minor) || compareSegment(v.patch, o.patch);
  if (d !== 0) return d;
  if (v.pre === '' && o.pre === '') return 0;
  if (v.pre === '') return 1;
  if (o.pre === '') return -1;
  return comparePrerelease(v.pre, o.pre);
}

interface Constraint {
  con: Version;
  orig: string;
  op: string;
  minorDirty: boolean;
  patchDirty: boolean;
  dirty: boolean;
}

const isX = (x: string): boolean => x === 'x' || x === '*' || x === 'X';

function parseConstraint(c: string): Constraint {
  const m = constraintRegex().findStringSubmatch(c);
  if (!m) throw new FuncError(`improper constraint: ${c}`);
  const [, op = '', orig = '', major = '', minorPart = '', patchPart = '', preAndDash = ''] = m;
  let ver = orig;
  let minorDirty = false;
  let patchDirty = false;
  let dirty = false;
  if (isX(major)) {
    ver = `0.0.0${preAndDash}`;
    dirty = true;
  } else if (isX(minorPart.replace(/^\./, '')) || minorPart === '') {
    minorDirty = true;
    dirty = true;
    ver = `${major}.0.0${preAndDash}`;
  } else if (isX(patchPart.replace(/^\./, '')) || patchPart === '') {
    dirty = true;
    patchDirty = true;
    ver = `${major}${minorPart}.0${preAndDash}`;
  }
  let con: Version;
  try {
    con = parseVersion(ver);
  } catch {
    throw new FuncError('constraint Parser Error');
  }
  return { con, orig, op, minorDirty, patchDirty, dirty };
}

function checkTilde(v: Version, c: Constraint): boolean {
  if (v.pre !== '' && c.con.pre === '') return false;
  if (compareVersions(v, c.con) < 0) return false;
  if (c.con.major === 0n && c.con.minor === 0n && c.con.patch === 0n && !c.minorDirty && !c.patchDirty) return true;
  if (v.major !== c.con.major) return false;
  if (v.minor !== c.con.minor && !c.minorDirty) return false;
  return true;
}

function check(v: Version, c: Constraint): boolean {
  const con = c.con;
  const preBlocked = v.pre !== '' && con.pre === '';
  switch (c.op) {
    case '':
    case '=':
      if (preBlocked) return false;
      if (c.dirty) return checkTilde(v, c);
      return compareVersions(v, con) === 0;
    case '!=':
      if (c.dirty) {
        if (preBlocked) return false;
        if (con.major !== v.major) return true;
        if (con.minor !== v.minor && !c.minorDirty) return true;
        if (c.minorDirty) return false;
        if (con.patch !== v.patch && !c.patchDirty) return true;
        if (c.patchDirty) {
          if (v.pre !== '' || con.pre !== '') return comparePrerelease(v.pre, con.pre) !== 0;
          return false;
        }
      }
      return compareVersions(v, con) !== 0;
    case '>':
      if (preBlocked) return false;
      if (!c.dirty) return compareVersions(v, con) === 1;
      if (v.major > con.major) return true;
      if (v.major < con.major) return false;
      if (c.minorDirty) return false;
      if (c.patchDirty) return v.minor > con.minor;
      return compareVersions(v, con) === 1;
    case '<':
      if (preBlocked) return false;
      return compareVersions(v, con) < 0;
    case '>=':
    case '=>':
      if (preBlocked) return false;
      return compareVersions(v, con) >= 0;
    case '<=':
    case '=<':
      if (preBlocked) return false;
      if (!c.dirty) return compareVersions(v, con) <= 0;
      if (v.major > con.major) return false;
      if (v.major === con.major && v.minor > con.minor && !c.minorDirty) return false;
      return true;
    case '~':
    case '~>':
      return checkTilde(v, c);
    case '^':
      if (preBlocked) return false;
      if (compareVersions(v, con) < 0) return false;
      if (con.major > 0n || c.minorDirty) return v.major === con.major;
      if (con.major === 0n && v.major > 0n) return false;
      if (con.minor > 0n || c.patchDirty) return v.minor === con.minor;
      if (con.minor === 0n && v.minor > 0n) return false;
      return con.patch === v.patch;
    default:
      return false;
  }
}

/** A parsed constraint: OR of ANDs. */
export type Constraints = Constraint[][];

/** semver.NewConstraint: throws FuncError (`improper constraint: X`) when `c` cannot be read. */
export function parseConstraints(c: string): Constraints {
  // Hyphen ranges "1.2 - 1.4" become ">= 1.2, <= 1.4".
  const rewritten = constraintRangeRegex().replaceAllString(c, '>= ${1}, <= ${11}');
  return rewritten.split('||').map((part) => {
    if (!validConstraintRegex().matchString(part)) throw new FuncError(`improper constraint: ${part}`);
    const found = findConstraintRegex().findAllString(part, -1) ?? [part];
    return found.map(parseConstraint);
  });
}

/** Constraints.Check: whether `v` satisfies any of the AND groups. */
export function checkConstraints(cs: Constraints, v: Version): boolean {
  return cs.some((group) => group.every((c) => check(v, c)));
}

/** A `*semver.Version` template value: prints as `1.2.3`, with `.Major`, `.Minor`, `.Patch`, ... */
export function versionValue(v: Version, goType = '*semver.Version'): GoOpaque {
  const inc = (next: Version): (() => GoOpaque) => {
    const vPrefix = v.original.startsWith('v') ? 'v' : '';
    return () => versionValue({ ...next, original: vPrefix + versionString(next) }, 'semver.Version');
  };
  const base = { ...v, pre: '', metadata: '' };
  const value = new GoOpaque(
    goType,
    {
      Major: () => v.major,
      Minor: () => v.minor,
      Patch: () => v.patch,
      Prerelease: () => v.pre,
      Metadata: () => v.metadata,
      Original: () => v.original,
      String: () => versionString(v),
      IncPatch: inc(v.pre !== '' ? base : { ...base, patch: v.patch + 1n }),
      IncMinor: inc({ ...base, patch: 0n, minor: v.minor + 1n }),
      IncMajor: inc({ ...base, patch: 0n, minor: 0n, major: v.major + 1n }),
    },
    () => versionString(v),
  );
  // Version implements json.Marshaler: it marshals as its string.
  return marshalsAsString(value);
}
