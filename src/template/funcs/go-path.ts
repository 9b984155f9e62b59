/**
 * Go's `path` package (slash-separated paths, purely lexical). On Linux `path/filepath` behaves the same, so
 * sprig's `os*` variants use these too.
 */

/** path.Clean: the shortest equivalent path (`/a/../b//c/` → `/b/c`, `` → `.`). */
export function cleanPath(path: string): string {
  if (path === '') return '.';
  const rooted = path[0] === '/';
  const n = path.length;
  let out = rooted ? '/' : '';
  let r = rooted ? 1 : 0;
  let dotdot = rooted ? 1 : 0;
  while (r < n) {
    if (path[r] === '/') r++;
    else if (path[r] === '.' && (r + 1 === n || path[r + 1] === '/')) r++;
    else if (path[r] === '.' && path[r + 1] === '.' && (r + 2 === n || path[r + 2] === '/')) {
      r += 2;
      if (out.length > dotdot) {
        let w = out.length - 1;
        while (w > dotdot && out[w] !== '/') w--;
        out = out.slice(0, w);
      } else if (!rooted) {
        if (out.length > 0) out += '/';
        out += '..';
        dotdot = out.length;
      }
    } else {
      if ((rooted && out.length !== 1) || (!rooted && out.length !== 0)) out += '/';
      const start = r;
      while (r < n && path[r] !== '/') r++;
      out += path.slice(start, r);
    }
  }
  return out === '' ? '.' : out;
}

/** path.Base: the last element (`/a/b/` → `b`, `` → `.`, `///` → `/`). */
export function basePath(path: string): string {
  if (path === '') return '.';
  path = path.replace(/\/+$/, '');
  const i = path.lastIndexOf('/');
  if (i >= 0) path = path.slice(i + 1);
  return path === '' ? '/' : path;
}

/** path.Dir: everything but the last element, cleaned (`/a/b/c.yaml` → `/a/b`). */
export function dirPath(path: string): string {
  return cleanPath(path.slice(0, path.lastIndexOf('/') + 1));
}

/** path.Ext: the extension of the last element, with its dot (`c.tar.gz` → `.gz`). */
export function extPath(path: string): string {
  for (let i = path.length - 1; i >= 0 && path[i] !== '/'; i--) if (path[i] === '.') return path.slice(i);
  return '';
}

/** path.IsAbs. */
export function isAbsPath(path: string): boolean {
  return path.startsWith('/');
}

/** filepath.Join on Linux: join the non-empty elements with `/` and clean. */
export function joinPath(...elems: string[]): string {
  const parts = elems.filter((e) => e !== '');
  return parts.length === 0 ? '' : cleanPath(parts.join('/'));
}
