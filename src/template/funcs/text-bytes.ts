/**
 * Byte-based text helpers as Masterminds/goutils v1.1.1 implements them for sprig: `abbrev`, `abbrevboth`,
 * `wrap`, `wrapWith`, `initials` and `nospace` work on UTF-8 bytes, not characters. Outside ASCII they can cut
 * characters (the stray bytes show as U+FFFD) and `initials`/`nospace` read single bytes as Latin-1 characters,
 * exactly as sprig does.
 */
import { checkResultSize, MAX_STRING_LENGTH } from '../limits.js';
import { fromByteString, isAscii, toByteString } from './go-string.js';
import { isSpaceRune } from './go-unicode.js';

/** goutils.AbbreviateFull on a byte string; null stands for its error (width too small). */
function abbreviateBytes(str: string, offset: number, maxWidth: number): string | null {
  if (str === '') return '';
  if (maxWidth < 4) return null;
  if (str.length <= maxWidth) return str;
  if (offset > str.length) offset = str.length;
  if (str.length - offset < maxWidth - 3) offset = str.length - (maxWidth - 3);
  const marker = '...';
  if (offset <= 4) return str.slice(0, maxWidth - 3) + marker;
  if (maxWidth < 7) return null;
  if (offset + maxWidth - 3 < str.length) {
    const inner = abbreviateBytes(str.slice(offset), 0, maxWidth - 3);
    return marker + (inner ?? '');
  }
  return marker + str.slice(str.length - (maxWidth - 3));
}

/** goutils.AbbreviateFull: abbreviate to `maxWidth` bytes with "..." around an `offset`; errors give "". */
export function abbreviateFull(s: string, offset: number, maxWidth: number): string {
  const r = abbreviateBytes(toByteString(s), offset, maxWidth);
  return r === null ? '' : fromByteString(r);
}

/** goutils.WrapCustom: wrap at `wrapLength` bytes on spaces, optionally cutting words longer than a line. */
export function wrapCustom(s: string, wrapLength: number, newLine: string, wrapLongWords: boolean): string {
  if (s === '') return '';
  const str = toByteString(s);
  const nl = toByteString(newLine === '' ? '\n' : newLine);
  if (wrapLength < 1) wrapLength = 1;
  const len = str.length;
  let offset = 0;
  let out = '';
  while (len - offset > wrapLength) {
    if (out.length > MAX_STRING_LENGTH) checkResultSize(out.length);
    if (str[offset] === ' ') {
      offset++;
      continue;
    }
    const end = wrapLength + offset + 1;
    const spaceAt = str.slice(offset, end).lastIndexOf(' ') + offset;
    if (spaceAt >= offset) {
      out += str.slice(offset, spaceAt) + nl;
      offset = spaceAt + 1;
    } else if (wrapLongWords) {
      out += str.slice(offset, wrapLength + offset) + nl;
      offset += wrapLength;
    } else {
      const from = wrapLength + offset;
      const index = str.slice(from).indexOf(' ');
      if (index === -1) {
        out += str.slice(offset);
        offset = len;
      } else {
        out += str.slice(offset, index + from) + nl;
        offset = index + from + 1;
      }
    }
  }
  out += str.slice(offset);
  return fromByteString(out);
}

/**
 * goutils.Initials: the first byte of every whitespace-separated word. Each byte is written as the character
 * with that code (so a multi-byte first letter gives its lead byte read as Latin-1, as in sprig).
 */
export function initials(s: string): string {
  if (s === '') return s;
  const str = toByteString(s);
  let out = '';
  let lastWasGap = true;
  for (let i = 0; i < str.length; i++) {
    const c = str.charCodeAt(i);
    if (isSpaceRune(c)) lastWasGap = true;
    else if (lastWasGap) {
      out += String.fromCharCode(c);
      lastWasGap = false;
    }
  }
  return out;
}

/**
 * goutils.DeleteWhiteSpace: drop whitespace bytes. When something is dropped, the remaining bytes are written as
 * Latin-1 characters (sprig's behaviour outside ASCII); when nothing is, the string comes back unchanged.
 */
export function deleteWhiteSpace(s: string): string {
  if (s === '') return s;
  const str = isAscii(s) ? s : toByteString(s);
  let out = '';
  let dropped = false;
  for (let i = 0; i < str.length; i++) {
    const c = str.charCodeAt(i);
    if (isSpaceRune(c)) dropped = true;
    else out += str[i] ?? '';
  }
  return dropped ? out : s;
}
