/**
 * `kapps render`: render one Go template (a file or stdin) against YAML vars files and `--set` values, or render a
 * batch of conformance cases (`--cases`). Errors print Go's text to stderr and exit 1.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { KappsError, UsageError } from '../../diagnostics/errors.js';
import type { GoMap, GoValue } from '../../go-value/value.js';

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

/** The `render` command: one template against vars, or a case file (`--cases`). */
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
      .example('$0 render values.tpl --vars stack.yaml --set n=3', 'Render a file')
      .example("echo '{{ .name | upper }}' | $0 render --set name=world", 'Render stdin')
      .example('$0 render --cases cases.json --fixtures ./fixtures', 'Render test cases as JSON results')
      .epilogue(
        'Templates are Go text/template (Go 1.19) with sprig v3 and Sugarkube functions. The result goes to ' +
          'stdout; a template error goes to stderr with Go’s message and the exit code is 1.',
      ) as unknown as Argv<RenderArgs>,
  handler: async (argv) => {
    if (argv.cases !== undefined) {
      await renderCases(argv.cases, argv.fixtures, argv.strict);
      return;
    }
    const data = await buildData(asList(argv.vars), asList(argv.set), asList(argv.setString));
    const text = readInput(argv.file);
    const { renderTemplate, TemplateError } = await import('../../template/index.js');
    try {
      process.stdout.write(renderTemplate(text, data, { strict: argv.strict }));
    } catch (e) {
      if (e instanceof TemplateError) throw new KappsError(e.message);
      throw e;
    }
  },
};

/** The data of a single render: vars files merged in order, then `--set` and `--set-string` values. */
async function buildData(varsFiles: string[], sets: string[], setStrings: string[]): Promise<GoValue> {
  const [{ parseYamlValue }, { resolveScalar }, { mergeGoData, setGoPath }, { newGoMap }] = await Promise.all([
    import('../../yaml/read.js'),
    import('../../yaml/scalar.js'),
    import('../../template/data-build.js'),
    import('../../go-value/value.js'),
  ]);
  let data: GoValue = newGoMap();
  for (const file of varsFiles) data = mergeGoData(data, parseYamlValue(readInput(file), { file, goMaps: true }));
  const top = data as GoMap;
  const assign = (spec: string, typed: boolean): void => {
    const eq = spec.indexOf('=');
    const flag = typed ? '--set' : '--set-string';
    if (eq <= 0) throw new UsageError(`${flag} expects key=value, got ${JSON.stringify(spec)}`);
    const path = spec.slice(0, eq).split('.');
    if (path.some((p) => p === '')) throw new UsageError(`${flag}: empty key segment in ${JSON.stringify(spec)}`);
    const raw = spec.slice(eq + 1);
    setGoPath(top, path, typed ? resolveScalar(raw, true).value : raw);
  };
  for (const s of sets) assign(s, true);
  for (const s of setStrings) assign(s, false);
  return data;
}

async function renderCases(casesFile: string, fixtures: string | undefined, strict: boolean): Promise<void> {
  const [{ runCases, formatResults }, { parseLosslessJson }, { parseYamlValue }] = await Promise.all([
    import('../../template/cases.js'),
    import('../../template/lossless-json.js'),
    import('../../yaml/read.js'),
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
