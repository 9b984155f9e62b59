/**
 * The parts of Go's net/url (Go 1.19) that sprig's `urlParse` and `urlJoin` use: url.Parse, URL.String,
 * URL.Hostname and Userinfo.String, with Go's escaping rules and error texts. Work is done on UTF-8 bytes
 * (one character per byte) as Go does.
 */
import { quoteGo } from '../fmt.js';
import { fromByteString, toByteString } from './go-string.js';

type Mode = 'path' | 'pathSegment' | 'host' | 'zone' | 'userPassword' | 'queryComponent' | 'fragment';

/** A URL, as Go's url.URL fields (strings hold bytes, one character per byte). */
export interface GoURL {
  scheme: string;
  opaque: string;
  user: { username: string; password: string | null } | null;
  host: string;
  path: string;
  rawPath: string;
  omitHost: boolean;
  forceQuery: boolean;
  rawQuery: string;
  fragment: string;
  rawFragment: string;
}

/** A url.Parse failure with Go's message. */
export class URLError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'URLError';
  }
}

const isAlnum = (c: string): boolean => /^[A-Za-z0-9]$/.test(c);
const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9A-Fa-f]$/.test(c);
const unhex = (c: string): number => parseInt(c, 16);

function shouldEscape(c: string, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  if ((mode === 'host' || mode === 'zone') && `!$&'()*+,;=:[]<>"`.includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    switch (mode) {
      case 'path':
        return c === '?';
      case 'pathSegment':
        return c === '/' || c === ';' || c === ',' || c === '?';
      case 'userPassword':
        return c === '@' || c === '/' || c === '?' || c === ':';
      case 'queryComponent':
        return true;
      case 'fragment':
        return false;
      default:
        break;
    }
  }
  if (mode === 'fragment' && '!()*'.includes(c)) return false;
  return true;
}

function unescape(s: string, mode: Mode): string {
  let n = 0;
  let hasPlus = false;
  for (let i = 0; i < s.length;) {
    const c = s[i] ?? '';
    if (c === '%') {
      n++;
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2])) {
        throw new URLError(`invalid URL escape ${quoteGo(fromByteString(s.slice(i, i + 3)))}`);
      }
      const seq = s.slice(i, i + 3);
      if (mode === 'host' && unhex(s[i + 1] ?? '0') < 8 && seq !== '%25') {
        throw new URLError(`invalid URL escape ${quoteGo(seq)}`);
      }
      if (mode === 'zone') {
        const v = String.fromCharCode(unhex(seq.slice(1)));
        if (seq !== '%25' && v !== ' ' && shouldEscape(v, 'host')) {
          throw new URLError(`invalid URL escape ${quoteGo(seq)}`);
        }
      }
      i += 3;
    } else if (c === '+') {
      hasPlus = mode === 'queryComponent';
      i++;
    } else {
      if ((mode === 'host' || mode === 'zone') && c.charCodeAt(0) < 0x80 && shouldEscape(c, mode)) {
        throw new URLError(`invalid character ${quoteGo(c)} in host name`);
      }
      i++;
    }
  }
  if (n === 0 && !hasPlus) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] ?? '';
    if (c === '%') {
      out += String.fromCharCode(unhex(s.slice(i + 1, i + 3)));
      i += 2;
    } else if (c === '+') out += mode === 'queryComponent' ? ' ' : '+';
    else out += c;
  }
  return out;
}

function escape(s: string, mode: Mode): string {
  let out = '';
  for (const c of s) {
    if (c === ' ' && mode === 'queryComponent') out += '+';
    else if (shouldEscape(c, mode)) out += '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0');
    else out += c;
  }
  return out;
}

function validOptionalPort(port: string): boolean {
  if (port === '') return true;
  if (port[0] !== ':') return false;
  return /^[0-9]*$/.test(port.slice(1));
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new URLError("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort)) throw new URLError(`invalid port ${quoteGo(colonPort)} after host`);
    const zone = host.slice(0, i).indexOf('%25');
    if (zone >= 0) {
      return (
        unescape(host.slice(0, zone), 'host') + unescape(host.slice(zone, i), 'zone') + unescape(host.slice(i), 'host')
      );
    }
  } else {
    const i = host.lastIndexOf(':');
    if (i !== -1) {
      const colonPort = host.slice(i);
      if (!validOptionalPort(colonPort)) throw new URLError(`invalid port ${quoteGo(colonPort)} after host`);
    }
  }
  return unescape(host, 'host');
}

function parseAuthority(authority: string): { user: GoURL['user']; host: string } {
  const i = authority.lastIndexOf('@');
  const host = parseHost(i < 0 ? authority : authority.slice(i + 1));
  if (i < 0) return { user: null, host };
  const userinfo = authority.slice(0, i);
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new URLError('net/url: invalid userinfo');
  const colon = userinfo.indexOf(':');
  if (colon < 0) return { user: { username: unescape(userinfo, 'userPassword'), password: null }, host };
  return {
    user: {
      username: unescape(userinfo.slice(0, colon), 'userPassword'),
      password: unescape(userinfo.slice(colon + 1), 'userPassword'),
    },
    host,
  };
}

function getScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] ?? '';
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new URLError('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

function emptyURL(): GoURL {
  return {
    scheme: '',
    opaque: '',
    user: null,
    host: '',
    path: '',
    rawPath: '',
    omitHost: false,
    forceQuery: false,
    rawQuery: '',
    fragment: '',
    rawFragment: '',
  };
}

function parseNoFragment(raw: string): GoURL {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new URLError('net/url: invalid control character in URL');
  const u = emptyURL();
  if (raw === '*') {
    u.path = '*';
    return u;
  }
  let rest: string;
  [u.scheme, rest] = getScheme(raw);
  u.scheme = u.scheme.toLowerCase();
  if (rest.endsWith('?') && rest.split('?').length === 2) {
    u.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      u.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (u.scheme !== '') {
      u.opaque = rest;
      return u;
    }
    if ((rest.split('/')[0] ?? '').includes(':')) {
      throw new URLError('first path segment in URL cannot contain colon');
    }
  }
  if ((u.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const i = authority.indexOf('/');
    if (i >= 0) {
      rest = authority.slice(i);
      authority = authority.slice(0, i);
    }
    const a = parseAuthority(authority);
    u.user = a.user;
    u.host = a.host;
  } else if (u.scheme !== '' && rest.startsWith('/')) u.omitHost = true;
  u.path = unescape(rest, 'path');
  u.rawPath = escape(u.path, 'path') === rest ? '' : rest;
  return u;
}

/** url.Parse on a JavaScript string; throws URLError with Go's `parse "x": reason` text. */
export function parseURL(rawURL: string): GoURL {
  const raw = toByteString(rawURL);
  const hash = raw.indexOf('#');
  const u = hash < 0 ? raw : raw.slice(0, hash);
  const frag = hash < 0 ? '' : raw.slice(hash + 1);
  let url: GoURL;
  try {
    url = parseNoFragment(u);
  } catch (e) {
    throw new URLError(`parse ${quoteGo(fromByteString(u))}: ${(e as Error).message}`);
  }
  if (frag === '') return url;
  try {
    url.fragment = unescape(frag, 'fragment');
    url.rawFragment = escape(url.fragment, 'fragment') === frag ? '' : frag;
  } catch (e) {
    throw new URLError(`parse ${quoteGo(rawURL)}: ${(e as Error).message}`);
  }
  return url;
}

function validEncoded(s: string, mode: Mode): boolean {
  for (const c of s) {
    if (`!$&'()*+,;=:@[]%`.includes(c)) continue;
    if (shouldEscape(c, mode)) return false;
  }
  return true;
}

function escapedPath(u: GoURL): string {
  if (u.rawPath !== '' && validEncoded(u.rawPath, 'path')) {
    try {
      if (unescape(u.rawPath, 'path') === u.path) return u.rawPath;
    } catch {
      // fall through to the default encoding
    }
  }
  if (u.path === '*') return '*';
  return escape(u.path, 'path');
}

function escapedFragment(u: GoURL): string {
  if (u.rawFragment !== '' && validEncoded(u.rawFragment, 'fragment')) {
    try {
      if (unescape(u.rawFragment, 'fragment') === u.fragment) return u.rawFragment;
    } catch {
      // fall through to the default encoding
    }
  }
  return escape(u.fragment, 'fragment');
}

/** Userinfo.String (escaped), on byte strings. */
function userString(user: NonNullable<GoURL['user']>): string {
  let s = escape(user.username, 'userPassword');
  if (user.password !== null) s += ':' + escape(user.password, 'userPassword');
  return s;
}

/** Userinfo.String of a parsed URL's user ("" when there is none), as a JavaScript string. */
export function urlUserString(u: GoURL): string {
  return u.user ? fromByteString(userString(u.user)) : '';
}

/** URL.Hostname: the host without port and IPv6 brackets. */
export function urlHostname(u: GoURL): string {
  let host = u.host;
  const colon = host.lastIndexOf(':');
  if (colon !== -1 && validOptionalPort(host.slice(colon))) host = host.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return fromByteString(host);
}

/** URL.String: reassemble a URL with Go's escaping. */
export function urlString(u: GoURL): string {
  let buf = '';
  if (u.scheme !== '') buf += u.scheme + ':';
  if (u.opaque !== '') buf += u.opaque;
  else {
    if (u.scheme !== '' || u.host !== '' || u.user !== null) {
      if (!(u.omitHost && u.host === '' && u.user === null)) {
        if (u.host !== '' || u.path !== '' || u.user !== null) buf += '//';
        if (u.user) buf += userString(u.user) + '@';
        if (u.host !== '') buf += escape(u.host, 'host');
      }
    }
    const path = escapedPath(u);
    if (path !== '' && path[0] !== '/' && u.host !== '') buf += '/';
    if (buf.length === 0 && (path.split('/')[0] ?? '').includes(':')) buf += './';
    buf += path;
  }
  if (u.forceQuery || u.rawQuery !== '') buf += '?' + u.rawQuery;
  if (u.fragment !== '') buf += '#' + escapedFragment(u);
  return fromByteString(buf);
}

/** Field values of a URL as JavaScript strings. */
export function urlField(u: GoURL, field: 'scheme' | 'host' | 'path' | 'rawQuery' | 'opaque' | 'fragment'): string {
  return fromByteString(u[field]);
}

/** A URL from JavaScript-string fields (urlJoin's input). */
export function makeURL(fields: {
  scheme: string;
  host: string;
  path: string;
  rawQuery: string;
  opaque: string;
  fragment: string;
  user: GoURL['user'];
}): GoURL {
  return {
    ...emptyURL(),
    scheme: toByteString(fields.scheme),
    host: toByteString(fields.host),
    path: toByteString(fields.path),
    rawQuery: toByteString(fields.rawQuery),
    opaque: toByteString(fields.opaque),
    fragment: toByteString(fields.fragment),
    user: fields.user,
  };
}
