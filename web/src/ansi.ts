/**
 * ANSI escape sequences in log lines: SGR colours and styles turned into segments the page renders with classes
 * (the 16 colours) or a colour value (256 colours and 24-bit), every other escape sequence dropped; `stripAnsi` for
 * the places that show plain text (the failure box, downloads, search).
 */

export interface AnsiSegment {
  text: string;
  /** Space-separated classes: `a-b` bold, `a-d` dim, `a-i` italic, `a-u` underline, `a-fN` / `a-bN` (0–15). */
  cls: string;
  /** A colour the classes cannot say (256 colours or 24-bit): `#rrggbb`. */
  fg?: string;
  bg?: string;
}

// CSI sequences (ESC [ … final byte), OSC sequences (ESC ] … BEL or ESC \), and two-byte escapes.
// eslint-disable-next-line no-control-regex
const ESCAPES = /\u001b\[([0-9;:?]*)([@-~])|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-Z\\-_]?/g;

/** The text without any escape sequence. */
export function stripAnsi(text: string): string {
  return text.includes('\u001b') ? text.replace(ESCAPES, '') : text;
}

interface Style {
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
  fg: number | string | null;
  bg: number | string | null;
}

const plain = (): Style => ({ bold: false, dim: false, italic: false, underline: false, fg: null, bg: null });

/** The segments of a line, each with its style; a line without escapes is one unstyled segment. */
export function parseAnsi(text: string): AnsiSegment[] {
  if (!text.includes('\u001b')) return [{ text, cls: '' }];
  const out: AnsiSegment[] = [];
  let style = plain();
  let last = 0;
  const push = (chunk: string) => {
    if (chunk) out.push(segment(chunk, style));
  };
  for (const m of text.matchAll(ESCAPES)) {
    push(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] === 'm') style = applySgr(style, m[1] ?? '');
  }
  push(text.slice(last));
  return out;
}

function segment(text: string, s: Style): AnsiSegment {
  const cls: string[] = [];
  if (s.bold) cls.push('a-b');
  if (s.dim) cls.push('a-d');
  if (s.italic) cls.push('a-i');
  if (s.underline) cls.push('a-u');
  const seg: AnsiSegment = { text, cls: '' };
  if (typeof s.fg === 'number') cls.push(`a-f${s.fg}`);
  else if (typeof s.fg === 'string') seg.fg = s.fg;
  if (typeof s.bg === 'number') cls.push(`a-g${s.bg}`);
  else if (typeof s.bg === 'string') seg.bg = s.bg;
  seg.cls = cls.join(' ');
  return seg;
}

function applySgr(current: Style, params: string): Style {
  const s = { ...current };
  const codes = params === '' ? [0] : params.split(/[;:]/).map((p) => (p === '' ? 0 : Number(p)));
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i]!;
    if (c === 0) Object.assign(s, plain());
    else if (c === 1) s.bold = true;
    else if (c === 2) s.dim = true;
    else if (c === 3) s.italic = true;
    else if (c === 4) s.underline = true;
    else if (c === 22) s.bold = s.dim = false;
    else if (c === 23) s.italic = false;
    else if (c === 24) s.underline = false;
    else if (c >= 30 && c <= 37) s.fg = c - 30;
    else if (c >= 90 && c <= 97) s.fg = c - 90 + 8;
    else if (c === 39) s.fg = null;
    else if (c >= 40 && c <= 47) s.bg = c - 40;
    else if (c >= 100 && c <= 107) s.bg = c - 100 + 8;
    else if (c === 49) s.bg = null;
    else if (c === 38 || c === 48) {
      const mode = codes[i + 1];
      let colour: number | string;
      if (mode === 5) {
        colour = colour256(codes[i + 2] ?? 0);
        i += 2;
      } else if (mode === 2) {
        colour = hex(codes[i + 2] ?? 0, codes[i + 3] ?? 0, codes[i + 4] ?? 0);
        i += 4;
      } else break;
      if (c === 38) s.fg = colour;
      else s.bg = colour;
    }
  }
  return s;
}

function hex(r: number, g: number, b: number): string {
  const h = (n: number) =>
    Math.max(0, Math.min(255, Math.trunc(n) || 0))
      .toString(16)
      .padStart(2, '0');
  return `#${h(r)}${h(g)}${h(b)}`;
}

/** A 256-colour index: the 16 colours as classes, the cube and the greys as values. */
function colour256(n: number): number | string {
  if (n < 16) return Math.max(0, Math.trunc(n));
  if (n < 232) {
    const i = n - 16;
    const level = (v: number) => (v === 0 ? 0 : 55 + v * 40);
    return hex(level(Math.floor(i / 36)), level(Math.floor(i / 6) % 6), level(i % 6));
  }
  const grey = 8 + (Math.min(n, 255) - 232) * 10;
  return hex(grey, grey, grey);
}
