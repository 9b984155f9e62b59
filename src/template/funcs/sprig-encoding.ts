/**
 * sprig v3.2.3's encodings: base64/base32 (`b64dec` of bad input returns Go's error text as its result), JSON
 * (`toJson` gives "" on an unsupported value, `toRawJson` panics, the `must*` forms return the error, `fromJson`
 * of bad JSON gives nil) and the hash functions.
 */
import type * as Crypto from 'node:crypto';
import { FuncError } from '../types.js';
import type { GoValue } from '../../go-value/value.js';
import { ANY, def, type FuncTable, str } from './define.js';
import { CorruptInputError, decodeBase32, decodeBase64, encodeBase32 } from './go-base.js';
import { indentJson, JsonError, marshalJson } from './go-json.js';
import { unmarshalJson } from './go-json-decode.js';
import { decodeGoBytes, utf8Bytes } from './go-string.js';

const S = 'string';

function decodeOrError(s: string, decode: (b: Uint8Array) => Uint8Array): string {
  try {
    return decodeGoBytes(decode(utf8Bytes(s)));
  } catch (e) {
    if (e instanceof CorruptInputError) return e.message;
    throw e;
  }
}

/** node:crypto, loaded by the first function that needs it, not with the module (milliseconds of every command). */
const crypto = (): typeof Crypto => process.getBuiltinModule('node:crypto');

/** hash/adler32 checksum of the UTF-8 bytes. */
function adler32(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (const byte of bytes) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return (b * 65536 + a) >>> 0;
}

/** Run a JSON encoder; on failure either return "" (quiet), throw the error, or panic with it. */
function json(v: GoValue, encode: (v: GoValue) => string, onError: 'empty' | 'error' | 'panic'): string {
  try {
    return encode(v);
  } catch (e) {
    if (!(e instanceof JsonError)) throw e;
    if (onError === 'empty') return '';
    throw new FuncError(e.message, onError === 'panic');
  }
}

const compact = (v: GoValue): string => marshalJson(v, true);
const pretty = (v: GoValue): string => indentJson(marshalJson(v, true), '  ');
const raw = (v: GoValue): string => marshalJson(v, false);

/** sprig's encoding, JSON and hash functions by name. */
export function encodingFuncs(): FuncTable {
  return {
    b64enc: def([S], (a) => Buffer.from(utf8Bytes(str(a, 0))).toString('base64')),
    b64dec: def([S], (a) => decodeOrError(str(a, 0), decodeBase64)),
    b32enc: def([S], (a) => encodeBase32(utf8Bytes(str(a, 0)))),
    b32dec: def([S], (a) => decodeOrError(str(a, 0), decodeBase32)),
    sha1sum: def([S], (a) =>
      crypto()
        .createHash('sha1')
        .update(utf8Bytes(str(a, 0)))
        .digest('hex'),
    ),
    sha256sum: def([S], (a) =>
      crypto()
        .createHash('sha256')
        .update(utf8Bytes(str(a, 0)))
        .digest('hex'),
    ),
    adler32sum: def([S], (a) => String(adler32(utf8Bytes(str(a, 0))))),
    toJson: def([ANY], (a) => json(a[0] ?? null, compact, 'empty')),
    mustToJson: def([ANY], (a) => json(a[0] ?? null, compact, 'error')),
    toPrettyJson: def([ANY], (a) => json(a[0] ?? null, pretty, 'empty')),
    mustToPrettyJson: def([ANY], (a) => json(a[0] ?? null, pretty, 'error')),
    toRawJson: def([ANY], (a) => json(a[0] ?? null, raw, 'panic')),
    mustToRawJson: def([ANY], (a) => json(a[0] ?? null, raw, 'error')),
    fromJson: def([S], (a) => {
      try {
        return unmarshalJson(str(a, 0));
      } catch (e) {
        if (e instanceof JsonError) return null;
        throw e;
      }
    }),
    mustFromJson: def([S], (a) => {
      try {
        return unmarshalJson(str(a, 0));
      } catch (e) {
        if (e instanceof JsonError) throw new FuncError(e.message);
        throw e;
      }
    }),
  };
}
