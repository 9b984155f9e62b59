/**
 * Go strings are UTF-8 bytes; kapps strings are JavaScript strings. These helpers give byte-based lengths and
 * slicing as Go computes them. A cut inside a multi-byte character leaves bytes that are not UTF-8: each such
 * byte becomes U+FFFD, which is what Go's own JSON and text output shows for them.
 */
import { compareStrings } from '../map-order.js';

const utf8Encoder = new TextEncoder();
// ignoreBOM: a leading U+FEFF is text in Go, not a byte-order mark to drop.
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Whether a string is pure ASCII (then bytes and UTF-16 units coincide). */
export function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** The UTF-8 bytes of a string (a lone surrogate counts as U+FFFD). */
export function utf8Bytes(s: string): Uint8Array {
  return utf8Encoder.encode(s);
}

/** Go's len(s): the number of UTF-8 bytes. */
export function byteLength(s: string): number {
  return isAscii(s) ? s.length : utf8Encoder.encode(s).length;
}

/**
 * Decode bytes the way Go reads them rune by rune (utf8.DecodeRune): every byte that does not start a valid
 * sequence becomes one U+FFFD.
 */
export function decodeGoBytes(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    // Invalid UTF-8: decode by hand below.
  }
  let out = '';
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b0 = bytes[i] ?? 0;
    if (b0 < 0x80) {
      out += String.fromCharCode(b0);
      i++;
      continue;
    }
    let need = 0;
    let cp = 0;
    let min = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      need = 1;
      cp = b0 & 0x1f;
      min = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      need = 2;
      cp = b0 & 0x0f;
      min = 0x800;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      need = 3;
      cp = b0 & 0x07;
      min = 0x10000;
    }
    let ok = need > 0 && i + need < n;
    if (ok) {
      for (let k = 1; k <= need; k++) {
        const b = bytes[i + k] ?? 0;
        if ((b & 0xc0) !== 0x80) {
          ok = false;
          break;
        }
        cp = (cp << 6) | (b & 0x3f);
      }
    }
    if (ok && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (ok) {
      out += String.fromCodePoint(cp);
      i += need + 1;
    } else {
      out += '\ufffd';
      i++;
    }
  }
  return out;
}

/** Go's s[start:end] on byte offsets (both already checked to be within 0..len(s), start <= end). */
export function byteSlice(s: string, start: number, end?: number): string {
  if (isAscii(s)) return s.slice(start, end);
  const bytes = utf8Encoder.encode(s);
  return decodeGoBytes(bytes.subarray(start, end ?? bytes.length));
}

/** The bytes of a string as a Latin-1 JavaScript string (one char per byte), for byte-wise algorithms. */
export function toByteString(s: string): string {
  if (isAscii(s)) return s;
  const bytes = utf8Encoder.encode(s);
  let out = '';
  for (const b of bytes) out += String.fromCharCode(b);
  return out;
}

/** The inverse of toByteString: read a one-char-per-byte string as UTF-8 (Go's string(bytes)). */
export function fromByteString(b: string): string {
  if (isAscii(b)) return b;
  const bytes = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) bytes[i] = b.charCodeAt(i) & 0xff;
  return decodeGoBytes(bytes);
}

/** Compare two strings as Go does (byte-wise, i.e. by code point). */
export const compareGoStrings = compareStrings;
