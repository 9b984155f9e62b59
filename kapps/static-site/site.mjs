// The site's own steps, around the server's lifecycle:
//
//   node site.mjs check-page     the rendered page exists and has a title (prints it)
//   node site.mjs publish        copy the rendered page to public/index.html (atomically)
//   node site.mjs remove-files   remove the published page, the server's log and the generated files
//   node site.mjs describe       print {published, title, page} of the published page as JSON (the `page` output)
//   node site.mjs open URL       open URL in the desktop's browser
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const rendered = path.join(here, '_generated_page.html');
const page = path.join(here, 'public', 'index.html');

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(1);
}

function renderedPage() {
  if (!existsSync(rendered)) fail(`${path.relative(here, rendered)} is missing: the page template was not rendered`);
  const html = readFileSync(rendered, 'utf8');
  const title = /<title>([^<]*)<\/title>/.exec(html)?.[1]?.trim() ?? '';
  if (title === '' || title.includes('<no value>')) fail(`the rendered page has no usable title: '${title}'`);
  return { html, title };
}

const commands = {
  'check-page': () => {
    const { html, title } = renderedPage();
    console.log(`page '${title}' rendered (${html.length} bytes)`);
  },
  publish: () => {
    const { html, title } = renderedPage();
    const tmp = `${page}.tmp`;
    writeFileSync(tmp, html);
    renameSync(tmp, page);
    console.log(`published '${title}' to ${path.relative(here, page)}`);
  },
  describe: () => {
    const published = existsSync(page);
    const title = published ? (/<title>([^<]*)<\/title>/.exec(readFileSync(page, 'utf8'))?.[1]?.trim() ?? '') : '';
    console.log(JSON.stringify({ published, title, page }, null, 2));
  },
  open: () => {
    const url = process.argv[3];
    if (!url) fail('usage: node site.mjs open URL');
    const [cmd, ...args] =
      process.platform === 'darwin'
        ? ['open', url]
        : process.platform === 'win32'
          ? ['cmd', '/c', 'start', '', url]
          : ['xdg-open', url];
    const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
    child.on('error', (e) => fail(`cannot open a browser with ${cmd}: ${e.message}`));
    child.on('spawn', () => {
      child.unref();
      console.log(`opened ${url}`);
    });
  },
  'remove-files': () => {
    if (existsSync(path.join(here, '.run', 'server.pid'))) fail('the server still has a pid file: stop it first');
    const removed = [page, path.join(here, '.run')];
    for (const name of readdirSync(here)) if (name.startsWith('_generated_')) removed.push(path.join(here, name));
    for (const file of removed) rmSync(file, { recursive: true, force: true });
    console.log(`removed ${removed.map((f) => path.relative(here, f)).join(', ')}`);
  },
};

const run = commands[process.argv[2]];
if (!run) fail(`usage: node site.mjs ${Object.keys(commands).join('|')}`);
run();
