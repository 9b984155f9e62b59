// The bare spawn loop: the floor a Node program reaches on a DAG workload, shared by bench/workloads.mjs and
// bench/server.mjs. It spawns each node's command (split on spaces, no shell) once its dependencies are done, at most
// `workers` at a time, in node order, with pipes for stdout and stderr as kapps has, and nothing else.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

/** The floor: spawn each node's command once its deps are done, at most `workers` at a time, in node order. */
export function bareLoop(nodes, workers) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const pending = new Map(nodes.map((n) => [n.id, n.deps.length]));
    const children = new Map();
    for (const n of nodes) for (const d of n.deps) (children.get(d) ?? children.set(d, []).get(d)).push(n.id);
    const byId = new Map(nodes.map((n) => [n.id, n]));
    const ready = nodes.filter((n) => n.deps.length === 0).map((n) => n.id);
    let running = 0;
    let done = 0;
    const pump = () => {
      while (running < workers && ready.length) {
        const id = ready.shift();
        const [command, ...args] = byId.get(id).cmd.split(' ');
        running++;
        const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        child.stdout.on('data', () => {});
        child.stderr.on('data', () => {});
        child.on('error', reject);
        child.on('close', (code) => {
          if (code !== 0) return reject(new Error(`${id} exited ${code}`));
          running--;
          done++;
          for (const c of children.get(id) ?? []) {
            const left = pending.get(c) - 1;
            pending.set(c, left);
            if (left === 0) ready.push(c);
          }
          if (done === nodes.length) resolve(performance.now() - t0);
          else pump();
        });
      }
    };
    pump();
  });
}
