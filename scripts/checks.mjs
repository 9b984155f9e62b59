// The checks `npm test` makes before the tests (`npm run pretest`): the type check, lint, format, unused code and the
// build, run side by side, one per core (lint alone is about half of the time, the rest fits beside it). Each one's
// output is printed when it ends, whole; a failed check is named at the end and makes the exit code 1, after the
// others have finished, so that one run shows every failure.
//
//   node scripts/checks.mjs [name ...]     names from package.json's scripts; all five when none is given
import { spawn } from 'node:child_process';
import { Buffer } from 'node:buffer';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import process from 'node:process';

// The longest first, so that the short ones fill the other cores beside it.
const ALL = ['lint', 'typecheck', 'build', 'format', 'knip'];
const names = process.argv.length > 2 ? process.argv.slice(2) : ALL;
const slots = Math.max(1, Math.min(names.length, availableParallelism()));

/** `npm run -s <name>`, its output kept in order, stdout and stderr together. */
function run(name) {
  const started = performance.now();
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm, 'run', '-s', name]] : ['npm', ['run', '-s', name]];
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    const end = (ok, extra = '') => {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      const output = Buffer.concat(chunks).toString('utf8') + extra;
      process.stdout.write(`${ok ? '✓' : '✗'} ${name} (${seconds} s)\n`);
      if (!ok || output.trim() !== '')
        process.stdout.write(output.endsWith('\n') || output === '' ? output : `${output}\n`);
      resolve(ok);
    };
    child.on('error', (e) => end(false, `${e.message}\n`));
    child.on('close', (code, signal) => end(code === 0, code === 0 ? '' : `exited with ${signal ?? code}\n`));
  });
}

const queue = [...names];
const failed = [];
await Promise.all(
  Array.from({ length: slots }, async () => {
    for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
      if (!(await run(name))) failed.push(name);
    }
  }),
);
if (failed.length > 0) {
  process.stdout.write(`failed: ${failed.join(', ')}\n`);
  process.exitCode = 1;
}
