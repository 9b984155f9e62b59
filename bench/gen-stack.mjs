#!/usr/bin/env node
// Turn a DAG workload (dag.json from the shared gen-dag.mjs) into a kapps project: one kapp per node, spread over
// M manifests in node order, `depends_on` from the node's deps (fully qualified), one apply_install step running
// the node's command (and the same step in plan_install, so planning has something to render).
// --templated gives each kapp a variable and templated step arguments (`--kapp={{ .kapp.id }} {{ .kapp.vars.* }}`,
// appended to the command's own arguments), so planning renders every kapp's variables.
// --file-sources N gives each kapp a file source: a folder `library/<node>/` of N small files (one in a sub-folder),
// named by a path relative to the manifest, so every run syncs it into the kapp's workspace.
//
//   node bench/gen-stack.mjs --dag DIR/dag.json --out DIR/kapps --manifests 100 [--workers 8] [--templated] [--file-sources 4]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

function parseArgs(argv) {
  const o = { dag: null, out: null, manifests: 100, workers: 8, templated: false, fileSources: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--dag') o.dag = v();
    else if (a === '--out') o.out = v();
    else if (a === '--manifests') o.manifests = Number(v());
    else if (a === '--workers') o.workers = Number(v());
    else if (a === '--templated') o.templated = true;
    else if (a === '--file-sources') o.fileSources = Number(v());
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.dag || !o.out) throw new Error('usage: gen-stack.mjs --dag dag.json --out DIR [--manifests M] [--workers N]');
  return o;
}

export function writeStack({ dag, out, manifests, workers, templated = false, fileSources = 0 }) {
  const g = JSON.parse(readFileSync(dag, 'utf8'));
  const nodes = g.nodes;
  const per = Math.ceil(nodes.length / manifests);
  const width = String(manifests - 1).length;
  const manifestOf = new Map();
  nodes.forEach((n, i) => manifestOf.set(n.id, 'm' + String(Math.floor(i / per)).padStart(width, '0')));
  mkdirSync(path.join(out, 'manifests'), { recursive: true });
  const groups = new Map();
  for (const n of nodes) {
    const m = manifestOf.get(n.id);
    if (!groups.has(m)) groups.set(m, []);
    groups.get(m).push(n);
  }
  for (const [m, list] of groups) {
    const lines = ['kapps:'];
    for (const n of list) {
      const [command, ...rest] = n.cmd.split(' ');
      lines.push(`  - id: ${n.id}`);
      if (templated) lines.push('    vars:', `      layer: "${n.id}-{{ .stack.name }}"`);
      if (fileSources > 0) {
        const lib = path.join(out, 'library', n.id);
        mkdirSync(path.join(lib, 'files'), { recursive: true });
        for (let i = 0; i < fileSources; i++) {
          const file = i === 0 ? path.join(lib, 'files', 'values.yaml') : path.join(lib, `f${i}.txt`);
          writeFileSync(file, `# ${n.id} ${i}\n${'x'.repeat(200)}\n`);
        }
        lines.push('    sources:', `      - id: src`, `        uri: ../library/${n.id}`);
      }
      if (n.deps.length) {
        lines.push('    depends_on:');
        for (const d of n.deps) lines.push(`      - id: ${manifestOf.get(d)}:${d}`);
      }
      lines.push('    run_units:');
      lines.push('      step:');
      for (const phase of ['plan_install', 'apply_install']) {
        lines.push(`        ${phase}:`);
        lines.push(`          - name: run`);
        lines.push(`            command: ${command}`);
        const args = [...rest, ...(templated ? ['--kapp={{ .kapp.id }}', '--layer={{ .kapp.vars.layer }}'] : [])];
        if (args.length) lines.push(`            args: "${args.join(' ')}"`);
      }
    }
    writeFileSync(path.join(out, 'manifests', `${m}.yaml`), lines.join('\n') + '\n');
  }
  const stack = ['bench:', '  provider: local', '  provisioner: none', '  cluster: bench', '  manifests:'];
  for (const m of groups.keys()) stack.push(`    - uri: manifests/${m}.yaml`);
  writeFileSync(path.join(out, 'stacks.yaml'), stack.join('\n') + '\n');
  writeFileSync(path.join(out, 'sugarkube-conf.yaml'), `num_workers: ${workers}\n`);
  return { kapps: nodes.length, manifests: groups.size };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = writeStack(parseArgs(process.argv.slice(2)));
  process.stdout.write(`${r.kapps} kapps in ${r.manifests} manifests\n`);
}
