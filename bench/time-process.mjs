// Timing a whole process, shared by the benches that run the CLI, make or a command: its wall time in milliseconds,
// or a rejection with the end of its standard error when it exits non-zero.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export function timeProcess(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], ...options });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`));
      else resolve(ms);
    });
  });
}

/** The median of a list of numbers (the upper one of an even count). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * Node processes that report their own CPU time: a hook loaded into each (`--import`) writes its resource usage to a
 * file in `dir` when it exits. `run(args, {cwd, env, okCodes})` resolves to `{wall, cpu, stdout}` in milliseconds; an
 * exit code not in `okCodes` (default [0]) is a rejection with the process's standard error.
 */
export function nodeTimer(dir) {
  const hook = path.join(dir, 'rusage-hook.mjs');
  const rusageFile = path.join(dir, 'rusage.json');
  writeFileSync(
    hook,
    "import { writeFileSync } from 'node:fs';\n" +
      "process.on('exit', () => writeFileSync(process.env.KAPPS_BENCH_RUSAGE, JSON.stringify(process.resourceUsage())));\n",
  );
  return {
    run(args, { cwd, env = process.env, okCodes = [0] } = {}) {
      return new Promise((resolve, reject) => {
        const t0 = performance.now();
        const child = spawn(process.execPath, ['--import', pathToFileURL(hook).href, ...args], {
          cwd,
          env: { ...env, KAPPS_BENCH_RUSAGE: rusageFile },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
        child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
        child.on('error', reject);
        child.on('close', (code) => {
          const wall = performance.now() - t0;
          if (!okCodes.includes(code)) return reject(new Error(`node ${args.join(' ')} exited ${code}:\n${stderr}`));
          const usage = JSON.parse(readFileSync(rusageFile, 'utf8'));
          resolve({
            wall,
            cpu: (usage.userCPUTime + usage.systemCPUTime) / 1000,
            maxRssMb: usage.maxRSS / 1024,
            stdout,
          });
        });
      });
    },
  };
}
