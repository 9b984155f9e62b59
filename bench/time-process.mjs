// Timing a whole process, shared by the benches that run the CLI, make or a command: its wall time in milliseconds,
// or a rejection with the end of its standard error when it exits non-zero.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

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
