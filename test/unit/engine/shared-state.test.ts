/**
 * No module-level mutable state on a run's path: one process (the runs server) runs many runs at once, so what a
 * run renders, watches or remembers must travel with the run. This scans the sources (everything but the CLI, which
 * runs one command per process) for module-level `let`/`var` and for collections created empty at module level,
 * and accepts only the ones listed here, each with the reason it is not one run's state.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../../src', import.meta.url));

const LAZY_TABLE = 'a constant table built on first use';
const PURE_CACHE = 'a cache of a pure function of its key (the same for every run)';
const OBJECT_FACTS = "facts about an object, keyed by the object (a run's objects are its own)";
const SYNC_RENDER = 'set and restored around one synchronous parse or render: no run can interleave';
const PROCESS_POOL = "the process's helper processes and the steps' groups, shared by every run on purpose";

/** `file:name` → why it is not one run's state. */
const ALLOWED: Record<string, string> = {
  'engine/version.ts:cached': LAZY_TABLE,
  'template/index.ts:defaultFuncMap': LAZY_TABLE,
  'template/index.ts:cache': PURE_CACHE,
  'template/funcs/index.ts:sprigCache': LAZY_TABLE,
  'template/funcs/index.ts:sugarkubeCache': LAZY_TABLE,
  'template/funcs/index.ts:defaultCache': LAZY_TABLE,
  'template/funcs/regexp-classes.ts:scripts': LAZY_TABLE,
  'template/funcs/sprig-system.ts:asciiChars': LAZY_TABLE,
  'template/funcs/go-unicode.ts:orbitMap': LAZY_TABLE,
  'template/funcs/regexp.ts:cache': PURE_CACHE,
  'yaml/scalar.ts:WORDS': 'a constant table filled when the module loads',
  'process/resolve-command.ts:cache': 'hits of a command lookup by (name, PATH, cwd): the same answer for every run',
  'template/limits.ts:current': SYNC_RENDER,
  'template/parser.ts:parseName': SYNC_RENDER,
  'template/scope.ts:contexts': "the per-run store itself: each run's render context travels with its async flow",
  'config/locations.ts:selfTable': OBJECT_FACTS,
  'config/locations.ts:fieldTable': OBJECT_FACTS,
  'go-value/value.ts:typeTags': OBJECT_FACTS,
  'vars/render.ts:templateFree': OBJECT_FACTS,
  'vars/render.ts:containsCache': OBJECT_FACTS,
  'template/funcs/go-json.ts:nilSlices': OBJECT_FACTS,
  'template/funcs/go-json.ts:jsonStringers': OBJECT_FACTS,
  'engine/open.ts:said': OBJECT_FACTS,
  'engine/target.ts:legacyWarned': OBJECT_FACTS,
  'execute/templates.ts:liveSensitive':
    'sensitive files on disk, to delete on a second signal: each run adds and removes its own paths',
  'process/process-runner.ts:serverFailed': PROCESS_POOL,
  'process/process-runner.ts:nextId': PROCESS_POOL,
  'process/process-runner.ts:pending': PROCESS_POOL,
  'process/process-runner.ts:servers': PROCESS_POOL,
  'process/process-runner.ts:watchdog': PROCESS_POOL,
  'process/process-runner.ts:watchdogReady': PROCESS_POOL,
  'process/process-groups.ts:liveGroups': PROCESS_POOL,
  'process/process-server.ts:running': 'the steps of the process server (a process of its own)',
  'process/process-server.ts:outbox':
    'the messages the process server (a process of its own) sends at the end of this turn',
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'cli' && dir === SRC ? [] : sources(file);
    return name.endsWith('.ts') ? [file] : [];
  });
}

/**
 * Module-level declarations that hold state: `let`/`var`, `const` collections created empty, and a class's static
 * fields (shared by every instance: by every run) other than readonly values.
 */
function moduleState(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/^(?:export )?(?:let|var) +([\w$]+)/gm)) names.push(m[1] ?? '');
  const statics = /^ +(?:(?:private|protected|public|declare) +)*static +(readonly +)?(#?[\w$]+) *([:=!?][^;]*)/gm;
  for (const m of text.matchAll(statics)) {
    const createdEmpty = /^[^=]*= *(?:new +(?:Map|Set|WeakMap|WeakSet)\b[^(]*\(\s*\)|\[\]|\{\})/.test(m[3] ?? '');
    if (!m[1] || createdEmpty) names.push(m[2] ?? '');
  }
  const empty =
    /^(?:export )?const +([\w$]+)(?: *: *([^=]+))? *= *(?:new +(?:Map|Set|WeakMap|WeakSet|AsyncLocalStorage)\b[^(]*\(\s*\)|\[\]|\{\})/gm;
  for (const m of text.matchAll(empty)) if (!/^\s*(?:readonly|Readonly)/.test(m[2] ?? '')) names.push(m[1] ?? '');
  return names;
}

describe('module-level state', () => {
  const found = new Set<string>();
  for (const file of sources(SRC)) {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    for (const name of moduleState(readFileSync(file, 'utf8'))) found.add(`${rel}:${name}`);
  }

  it('is only what the list allows, each with its reason', () => {
    const unexplained = [...found].filter((k) => !(k in ALLOWED)).sort();
    expect(unexplained, 'module-level mutable state: pass it with the run instead, or explain it here').toEqual([]);
  });

  it('lists nothing that is gone', () => {
    expect(Object.keys(ALLOWED).filter((k) => !found.has(k))).toEqual([]);
  });

  it("covers every folder a server run takes, the runs server's executor and run stores included", () => {
    const scanned = new Set(sources(SRC).map((f) => path.relative(SRC, path.dirname(f)).split(path.sep).join('/')));
    for (const folder of [
      'server',
      'server/runs',
      'server/queue',
      'engine',
      'execute',
      'process',
      'template',
      'release',
    ])
      expect(scanned, folder).toContain(folder);
  });

  it('finds a class whose static fields hold state, not its static constants', () => {
    expect(
      moduleState(
        'class A {\n  static count = 0;\n  private static readonly seen = new Set<string>();\n' +
          '  static readonly LIMIT = 5;\n  static readonly names = new Set(["a"]);\n  static #last: string | undefined;\n}',
      ),
    ).toEqual(['count', 'seen', '#last']);
  });

  it('finds a module-level let and an empty Map', () => {
    expect(
      moduleState('let current: X | undefined;\nconst seen = new Map<string, number>();\nconst T = new Set([1]);'),
    ).toEqual(['current', 'seen']);
  });
});
