/**
 * The web page's files, when built (`dist/web/index.html`): served at `/` with their content types; any other path
 * outside `/api/` gets `index.html` (the page routes itself). Paths never leave the web directory.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** The directory of the built web page: dist/web/, from dist/server/http/ or from the bundle in dist/bin/. */
export function defaultWebRoot(): URL {
  return new URL(import.meta.url.includes('/server/http/') ? '../../web/' : '../web/', import.meta.url);
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

export async function registerWebFiles(app: FastifyInstance, root: URL): Promise<void> {
  const dir = resolve(fileURLToPath(root));
  const index = resolve(dir, 'index.html');
  if (!(await isFile(index))) return;
  const send = async (path: string): Promise<{ type: string; body: Buffer }> => ({
    type: TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
    body: await readFile(path),
  });
  app.get('/*', { schema: { hide: true } }, async (request, reply) => {
    const raw = (request.url.split('?')[0] ?? '/').replace(/^\/+/, '');
    if (raw === 'api' || raw.startsWith('api/')) {
      return reply.callNotFound();
    }
    let rel: string;
    try {
      rel = decodeURIComponent(raw);
    } catch {
      rel = '';
    }
    const target = resolve(dir, rel);
    const inside = target === dir || target.startsWith(dir + sep);
    const file = inside && rel !== '' && !rel.includes('\0') && (await isFile(target)) ? target : index;
    const { type, body } = await send(file);
    return reply
      .type(type)
      .header('cache-control', file === index ? 'no-cache' : 'public, max-age=3600')
      .header('x-content-type-options', 'nosniff')
      .send(body);
  });
}
