#!/usr/bin/env node
// The small file tree the `exists`/`findFiles` cases of funcs-cases.json run against (as `@FIXTURES@`). The tests
// create it in a temporary directory; to produce the expected results with gotpl, create it with
//   node test/unit/template-funcs/fixture-tree.mjs /tmp/kapps-funcs-fixtures
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Files (with contents), empty directories and symbolic links, relative to the root. */
const FILES = {
  'README.md': 'readme\n',
  'a.txt': 'a\n',
  '10.txt': 'ten\n',
  '9.txt': 'nine\n',
  'dir/file.txt': 'file\n',
  'dir/Z.txt': 'upper\n',
  'dir/_x.txt': 'underscore\n',
  'dir/sub/b.txt': 'b\n',
  'dir/sub/.hidden/c.txt': 'hidden\n',
};
const DIRS = ['empty'];
const LINKS = {
  'dir/link.txt': 'file.txt',
  'dir/dangling': 'does-not-exist',
  'dir/linkdir': 'sub',
};

/** Create the fixture tree under `root` (replacing anything already there). */
export function createFixtureTree(root) {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (const [path, content] of Object.entries(FILES)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  for (const dir of DIRS) mkdirSync(join(root, dir), { recursive: true });
  for (const [path, target] of Object.entries(LINKS)) symlinkSync(target, join(root, path));
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const root = process.argv[2];
  if (!root) {
    console.error('usage: node fixture-tree.mjs DIR');
    process.exit(2);
  }
  createFixtureTree(root);
  console.log(`fixture tree created in ${root}`);
}
