/**
 * `kapps render`: render one Go template (a file or stdin) against YAML vars files and `--set` values, or render a
 * batch of conformance cases (`--cases`). Errors print Go's text to stderr and exit 1.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { KappsError, UsageError } from '../../diagnostics/errors.js';
import type { GoKey, GoMap, GoValue } from '../../template/value.js';

interface RenderArgs {
  file?: string;
  vars: string[];
  set: string[];
  setString: string[];
  strict: boolean;
  cases?: string;
  fixtures?: string;
}

function asList(v: unknown): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

function readInput(file: string | undefined): string {
  // yargs hands a lone `-` over as an empty string.
  const stdin = file === undefined || file === '-' || file === '';
  try {
    return readFileSync(stdin ? 0 : file, 'utf8');
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    throw new KappsError(`cannot read ${stdin ? 'stdin' : file}: ${message}`);
  }
}

export const renderCommand: CommandModule<object, RenderArgs> = {
  command: 'render [file]',
  describe: 'Render a Go template (as kapp configs use them) against vars, or a batch of test cases',
  builder: (y) =>
    (y as Argv)
      .positional('file', { type: 'string', describe: 'Template file; `-` or nothing reads stdin' })
      .option('vars', {
        type: 'string',
        array: true,
        default: [],
        describe: 'YAML vars file (repeatable; later files win, maps merge deeply, lists replace)',
      })
      .option('set', {
        type: 'string',
        array: true,
        default: [],
        describe: 'key=value (repeatable): dotted keys make nested maps; the value is typed as YAML (1, true, 1.5)',
      })
      .option('set-string', {
        type: 'string',
        array: true,
        default: [],
        describe: 'key=value (repeatable) like --set, but the value is always a string',
      })
      .option('strict', {
        type: 'boolean',
        default: false,
        describe: 'A missing map key is an error (missingkey=error) instead of <no value>',
      })
      .option('cases', {
        type: 'string',
        describe: 'Render a case file ({"cases":[{"id","template","data"|"yaml","strict"?,"env"?}]}) and print results',
      })
      .option('fixtures', {
        type: 'string',
        describe: 'With --cases: directory substituted for @FIXTURES@ (default: fixtures/ next to the case file)',
      })
      .example('$0 render values.tpl --vars stack.yaml --set kapp.replicas=3', 'Render a file')
      .example("echo '{{ .name | upper }}' | $0 render --set name=world", 'Render stdin')
      .example('$0 render --cases cases.json --fixtures ./fixtures', 'Render test cases as JSON results')
      .epilogue(
        'Templates are Go text/template (Go 1.19) with sprig v3 and Sugarkube functions. The result goes to ' +
          'stdout; a template error goes to stderr with Go’s message and the exit code is 1.',
      ) as unknown as Argv<RenderArgs>,
  handler: async (argv) => {
    const [{ renderTemplate, TemplateError }, { parseYamlValue }] = await Promise.all([
      import('../../template/index.js'),
      import('../../config/yaml.js'),
    ]);
    if (argv.cases !== undefined) {
      await renderCases(argv.cases, argv.fixtures, argv.strict);
      return;
    }
    const { GoIfaceMap, newGoMap, isGoMap } = await import('../../template/value.js');
    const { resolveScalar } = await import('../../config/yaml-scalar.js');
    const isMap = (v: GoValue | undefined): v is GoMap | InstanceType<typeof GoIfaceMap> =>
      v instanceof GoIfaceMap || isGoMap(v);
    const get = (m: GoMap | InstanceType<typeof GoIfaceMap>, k: string): GoValue | undefined =>
      m instanceof GoIfaceMap ? m.get(k) : Object.prototype.hasOwnProperty.call(m, k) ? m[k] : undefined;
    const put = (m: GoMap | InstanceType<typeof GoIfaceMap>, k: GoKey, v: GoValue): void => {
      if (m instanceof GoIfaceMap) m.set(k, v);
      else m[String(k)] = v;
    };
    const merge = (base: GoValue, over: GoValue): GoValue => {
      if (!isMap(base) || !isMap(over)) return over;
      const entries: [GoKey, GoValue][] = over instanceof GoIfaceMap ? [...over] : Object.entries(over);
      for (const [k, v] of entries) {
        const cur = typeof k === 'string' ? get(base, k) : base instanceof GoIfaceMap ? base.get(k) : undefined;
        put(base, k, cur !== undefined && isMap(cur) && isMap(v) ? merge(cur, v) : v);
      }
      return base;
    };
    let data: GoValue = newGoMap();
    for (const file of asList(argv.vars)) {
      const text = readInput(file);
      const parsed = parseYamlValue(text, { file, goMaps: true });
      data = merge(data, parsed);
    }
    const assign = (spec: string, typed: boolean): void => {
      const eq = spec.indexOf('=');
      if (eq <= 0)
        throw new UsageError(`--set${typed ? '' : '-string'} expects key=value, got ${JSON.stringify(spec)}`);
      const path = spec.slice(0, eq).split('.');
      if (path.some((p) => p === '')) throw new UsageError(`empty key segment in ${JSON.stringify(spec)}`);
      const raw = spec.slice(eq + 1);
      const value = typed ? resolveScalar(raw, true).value : raw;
      let m = data as GoMap | InstanceType<typeof GoIfaceMap>;
      path.slice(0, -1).forEach((seg) => {
        const cur = get(m, seg);
        if (cur !== undefined && isMap(cur)) m = cur;
        else {
          const next = new GoIfaceMap();
          put(m, seg, next);
          m = next;
        }
      });
      put(m, path[path.length - 1] ?? '', value);
    };
    for (const s of asList(argv.set)) assign(s, true);
    for (const s of asList(argv.setString)) assign(s, false);
    const text = readInput(argv.file);
    try {
      process.stdout.write(renderTemplate(text, data, { strict: argv.strict }));
    } catch (e) {
      if (e instanceof TemplateError) throw new KappsError(e.message);
      throw e;
    }
  },
};

async function renderCases(casesFile: string, fixtures: string | undefined, strict: boolean): Promise<void> {
  const [{ runCases, formatResults }, { parseLosslessJson }, { parseYamlValue }] = await Promise.all([
    import('../../template/cases.js'),
    import('../../template/lossless-json.js'),
    import('../../config/yaml.js'),
  ]);
  const text = readInput(casesFile);
  let doc: GoValue;
  try {
    doc = parseLosslessJson(text);
  } catch (e) {
    throw new KappsError(`${casesFile}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const fixturesDir = resolve(fixtures ?? resolve(casesFile, '..', 'fixtures'));
  const results = runCases(doc, {
    fixturesDir,
    strict,
    getEnv: (name) => process.env[name],
    decodeYaml: (yaml) => parseYamlValue(yaml, { goMaps: true }),
  });
  process.stdout.write(formatResults(results));
}
