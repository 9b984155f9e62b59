/**
 * A git server over HTTP on loopback, for tests of credentials: a small Node HTTP server that answers only requests
 * carrying `Authorization: Basic <base64(user:token)>` with the expected token, and runs `git http-backend` as a CGI
 * program for the bare repositories under `root` (smart HTTP: clone, fetch, ls-remote). Others get 401.
 *
 * ```ts
 * const git = await gitHttpServer(path.dirname(remote.bare), 's3cret');
 * // http://127.0.0.1:<port>/remote.git
 * await git.close();
 * ```
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Requests answered, with whether they carried the right token. */
  readonly requests: { readonly path: string; readonly authorized: boolean }[];
  close(): Promise<void>;
}

/** Whether `header` is `Basic base64(<any user>:<token>)`. */
function carriesToken(header: string | undefined, token: string): boolean {
  const m = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '');
  if (!m?.[1]) return false;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  return decoded.slice(decoded.indexOf(':') + 1) === token;
}

/** Run `git http-backend` for one request, and answer with what it prints (CGI headers, a blank line, the body). */
function cgi(root: string, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const child = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: root,
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ''),
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      REMOTE_USER: 'git',
      REMOTE_ADDR: '127.0.0.1',
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const crlf = head.indexOf('\r\n\r\n');
    const lf = head.indexOf('\n\n');
    const end = crlf !== -1 && (lf === -1 || crlf < lf) ? crlf : lf;
    if (end === -1) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
      else res.setHeader(name, value);
    }
    res.statusCode = status;
    res.write(head.subarray(end + (end === crlf ? 4 : 2)));
  });
  child.on('close', () => {
    if (!headersDone) res.statusCode = 500;
    res.end();
  });
}

/** Serve the bare repositories under `root` to requests carrying `token`. */
export async function gitHttpServer(root: string, token: string): Promise<GitHttpServer> {
  const requests: { path: string; authorized: boolean }[] = [];
  const server = createServer((req, res) => {
    const authorized = carriesToken(req.headers.authorization, token);
    requests.push({ path: req.url ?? '', authorized });
    if (!authorized) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' });
      res.end('authentication required\n');
      return;
    }
    cgi(root, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
