/**
 * Go's base64.StdEncoding and base32.StdEncoding decoders, with Go's error offsets
 * (`illegal base64 data at input byte 4`): sprig's `b64dec`/`b32dec` return that text instead of failing.
 * Encoding uses Node's Buffer, which produces the same padded standard alphabets.
 */

/** A decoding failure at a byte offset (Go's CorruptInputError). */
export class CorruptInputError extends Error {
  constructor(
    readonly offset: number,
    kind: string,
  ) {
    super(`illegal ${kind} data at input byte ${offset}`);
    this.name = 'CorruptInputError';
  }
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function decodeMap(alphabet: string): Int16Array {
  const m = new Int16Array(256).fill(-1);
  for (let i = 0; i < alphabet.length; i++) m[alphabet.charCodeAt(i)] = i;
  return m;
}

const b64map = decodeMap(B64);
const b32map = decodeMap(B32);
const PAD = 0x3d;
const isNewline = (b: number | undefined): boolean => b === 0x0a || b === 0x0d;

/** base64.StdEncoding.DecodeString: newlines are ignored, padding is required. */
export function decodeBase64(src: Uint8Array): Uint8Array {
  const out: number[] = [];
  let si = 0;
  while (si < src.length) {
    const dbuf = [0, 0, 0, 0];
    let dlen = 4;
    let err: number | null = null;
    let j = 0;
    for (; j < 4; j++) {
      if (si === src.length) {
        if (j === 0) return Uint8Array.from(out);
        throw new CorruptInputError(si - j, 'base64');
      }
      const inb = src[si] ?? 0;
      si++;
      const v = b64map[inb] ?? -1;
      if (v >= 0) {
        dbuf[j] = v;
        continue;
      }
      if (isNewline(inb)) {
        j--;
        continue;
      }
      if (inb !== PAD) throw new CorruptInputError(si - 1, 'base64');
      // Padding: "==" after two symbols, "=" after three.
      if (j === 0 || j === 1) throw new CorruptInputError(si - 1, 'base64');
      if (j === 2) {
        while (si < src.length && isNewline(src[si])) si++;
        if (si === src.length) throw new CorruptInputError(src.length, 'base64');
        if (src[si] !== PAD) throw new CorruptInputError(si - 1, 'base64');
        si++;
      }
      while (si < src.length && isNewline(src[si])) si++;
      if (si < src.length) err = si;
      dlen = j;
      break;
    }
    const val = ((dbuf[0] ?? 0) << 18) | ((dbuf[1] ?? 0) << 12) | ((dbuf[2] ?? 0) << 6) | (dbuf[3] ?? 0);
    const bytes = [(val >> 16) & 0xff, (val >> 8) & 0xff, val & 0xff];
    out.push(...bytes.slice(0, dlen - 1));
    if (err !== null) throw new CorruptInputError(err, 'base64');
  }
  return Uint8Array.from(out);
}

/** base32.StdEncoding.DecodeString: newlines are removed first, padding is required. */
export function decodeBase32(input: Uint8Array): Uint8Array {
  const src = input.filter((b) => !isNewline(b));
  const olen = src.length;
  const out: number[] = [];
  let pos = 0;
  let end = false;
  while (pos < olen && !end) {
    const dbuf = [0, 0, 0, 0, 0, 0, 0, 0];
    let dlen = 8;
    for (let j = 0; j < 8;) {
      if (pos === olen) throw new CorruptInputError(olen - (olen - pos) - j, 'base32');
      const inb = src[pos] ?? 0;
      pos++;
      const left = olen - pos;
      if (inb === PAD && j >= 2 && left < 8) {
        if (left + j < 8 - 1) throw new CorruptInputError(olen, 'base32');
        for (let k = 0; k < 8 - 1 - j; k++) {
          if (left > k && src[pos + k] !== PAD) throw new CorruptInputError(olen - left + k - 1, 'base32');
        }
        dlen = j;
        end = true;
        if (dlen === 1 || dlen === 3 || dlen === 6) throw new CorruptInputError(olen - left - 1, 'base32');
        break;
      }
      const v = b32map[inb] ?? -1;
      if (v < 0) throw new CorruptInputError(olen - left - 1, 'base32');
      dbuf[j] = v;
      j++;
    }
    const d = dbuf.map((x) => x);
    const b = [
      ((d[0] ?? 0) << 3) | ((d[1] ?? 0) >> 2),
      ((d[1] ?? 0) << 6) | ((d[2] ?? 0) << 1) | ((d[3] ?? 0) >> 4),
      ((d[3] ?? 0) << 4) | ((d[4] ?? 0) >> 1),
      ((d[4] ?? 0) << 7) | ((d[5] ?? 0) << 2) | ((d[6] ?? 0) >> 3),
      ((d[6] ?? 0) << 5) | (d[7] ?? 0),
    ].map((x) => x & 0xff);
    const count = { 8: 5, 7: 4, 5: 3, 4: 2, 2: 1 }[dlen] ?? 0;
    out.push(...b.slice(0, count));
  }
  return Uint8Array.from(out);
}

/** base32.StdEncoding.EncodeToString. */
export function encodeBase32(src: Uint8Array): string {
  let out = '';
  for (let i = 0; i < src.length; i += 5) {
    const chunk = src.subarray(i, i + 5);
    let bits = 0n;
    for (let k = 0; k < 5; k++) bits = (bits << 8n) | BigInt(chunk[k] ?? 0);
    const symbols = Math.ceil((chunk.length * 8) / 5);
    for (let k = 0; k < 8; k++) {
      if (k < symbols) out += B32[Number((bits >> BigInt(35 - 5 * k)) & 31n)] ?? '';
      else out += '=';
    }
  }
  return out;
}
