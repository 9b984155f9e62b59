/**
 * The template function library: sprig v3.2.3 (minus the date, crypto and DNS functions) and Sugarkube's custom
 * functions, each declared with its Go signature (see ../types.ts). Maps are built once and shared; treat them
 * as read-only.
 */
import type { FuncDef, FuncMap } from '../types.js';
import type { FuncTable } from './define.js';
import { dictFuncs } from './sprig-dicts.js';
import { flowFuncs } from './sprig-defaults.js';
import { encodingFuncs } from './sprig-encoding.js';
import { listFuncs } from './sprig-lists.js';
import { mathFuncs } from './sprig-math.js';
import { regexFuncs } from './sprig-regex.js';
import { stringFuncs } from './sprig-strings.js';
import { systemFuncs } from './sprig-system.js';
import { sugarkubeFuncs as sugarkubeTable } from './sugarkube.js';

/** sprig functions kapps does not provide, with the reason; using one is a parse error (`not defined`). */
export const UNSUPPORTED_FUNCTIONS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    [
      'now',
      'date',
      'dateInZone',
      'date_in_zone',
      'dateModify',
      'date_modify',
      'mustDateModify',
      'must_date_modify',
      'ago',
      'duration',
      'durationRound',
      'toDate',
      'mustToDate',
      'unixEpoch',
      'htmlDate',
      'htmlDateInZone',
    ].map((n) => [n, 'date and time: renders would depend on the clock and time zone']),
  ),
  ...Object.fromEntries(
    [
      'bcrypt',
      'htpasswd',
      'genPrivateKey',
      'derivePassword',
      'buildCustomCert',
      'genCA',
      'genCAWithKey',
      'genSelfSignedCert',
      'genSelfSignedCertWithKey',
      'genSignedCert',
      'genSignedCertWithKey',
      'encryptAES',
      'decryptAES',
    ].map((n) => [n, 'cryptography: keys, certificates and secrets do not belong in kapp configuration']),
  ),
  getHostByName: 'network: a render must not depend on DNS',
};

function toMap(...tables: FuncTable[]): Map<string, FuncDef> {
  const m = new Map<string, FuncDef>();
  for (const t of tables) for (const [name, def] of Object.entries(t)) m.set(name, def);
  return m;
}

let sprigCache: Map<string, FuncDef> | undefined;
let sugarkubeCache: Map<string, FuncDef> | undefined;
let defaultCache: Map<string, FuncDef> | undefined;

/** The sprig v3.2.3 functions kapps supports. */
export function sprigFuncs(): FuncMap {
  sprigCache ??= toMap(
    stringFuncs(),
    listFuncs(),
    dictFuncs(),
    mathFuncs(),
    encodingFuncs(),
    regexFuncs(),
    flowFuncs(),
    systemFuncs(),
  );
  return sprigCache;
}

/** Sugarkube's custom functions: exists, findFiles, mapPrintF, listString, removeEmpty, isSet. */
export function sugarkubeFuncs(): FuncMap {
  sugarkubeCache ??= toMap(sugarkubeTable());
  return sugarkubeCache;
}

/** Every function templates can call: sprig plus Sugarkube's (a Sugarkube name wins over sprig's). */
export function defaultFuncs(): FuncMap {
  defaultCache ??= new Map([...sprigFuncs(), ...sugarkubeFuncs()]);
  return defaultCache;
}

/** The names of all supported functions, sorted. */
export const SUPPORTED_FUNCTIONS: readonly string[] = Object.freeze([...defaultFuncs().keys()].sort());
