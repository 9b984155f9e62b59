// A small static web server: serves the files of a directory, answers /healthz, and keeps a pid file while it
// runs. Started in the background by `service.mjs start`; stopped with SIGTERM by `service.mjs stop`.
//
//   node server.mjs --host 127.0.0.1 --port 18080 --root public --pid-file .run/server.pid
import { createReadStream, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '18080' },
    root: { type: 'string', default: 'public' },
    'pid-file': { type: 'string', default: '.run/server.pid' },
  },
});

const root = path.resolve(values.root);
const pidFile = path.resolve(values['pid-file']);
const port = Number(values.port);

const types = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
};

function send(res, status, text) {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${text}\n`);
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/healthz') return send(res, 200, 'ok');
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed');
  let file = path.join(root, decodeURIComponent(url.pathname));
  // Never serve anything outside the root.
  if (file !== root && !file.startsWith(root + path.sep)) return send(res, 404, 'not found');
  try {
    if (statSync(file).isDirectory()) file = path.join(file, 'index.html');
    statSync(file);
  } catch {
    return send(res, 404, 'not found');
  }
  res.writeHead(200, {
    'content-type': types[path.extname(file)] ?? 'application/octet-stream',
    'cache-control': 'no-store',
  });
  if (req.method === 'HEAD') return res.end();
  createReadStream(file).pipe(res);
});

function shutdown() {
  server.close();
  rmSync(pidFile, { force: true });
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

server.on('error', (e) => {
  console.error(
    `cannot listen on ${values.host}:${port}: ${e.code === 'EADDRINUSE' ? 'the port is already in use' : e.message}`,
  );
  process.exit(1);
});

server.listen(port, values.host, () => {
  // The pid file appears only once the server listens: `service.mjs start` waits for it.
  mkdirSync(path.dirname(pidFile), { recursive: true });
  writeFileSync(pidFile, `${process.pid}\n`);
  console.log(`serving ${root} at http://${values.host}:${port}/ (pid ${process.pid})`);
});
