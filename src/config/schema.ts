/**
 * The zod schemas of kapps' configuration files, as written (before normalisation and templating). They validate
 * the plain view of a parsed file (`./validate.ts`) and generate the JSON Schemas of `kapps schema`.
 *
 * Scalars are checked as YAML 1.1 decodes them: a string field takes any scalar (its text is kept), booleans take
 * `true`/`yes`/`on`/..., integers take YAML integers. Every object is strict, so unknown keys are reported; the
 * loaders decide whether that is an error or a warning for each file.
 */
import * as z from 'zod';

/** An error message builder for zod: "expected <what>" (the loader appends what it got). */
function expecting(what: string): { error: (issue: { code?: string }) => string | undefined } {
  return { error: (issue) => (issue.code === 'unrecognized_keys' ? undefined : `expected ${what}`) };
}

/** Any scalar; string fields keep the scalar's text (`print: true` → `"true"`, `args: 5` → `"5"`). */
export const text = z
  .union([z.string(), z.number(), z.boolean()], expecting('a string'))
  .meta({ id: 'Text', description: 'Text; any YAML scalar is taken as written (`true` is the text "true").' });

/** A list of texts. */
const textList = (description: string) => z.array(text, expecting('a list of strings')).meta({ description });

/** A template (a string containing `{{`), for a field whose value is otherwise `what`. */
const template = (what: string) => z.string(expecting(what)).regex(/\{\{/, expecting(what));

/** A boolean (YAML 1.1 words accepted). */
const bool = (description: string) => z.boolean(expecting('a boolean (true or false)')).meta({ description });

/** A boolean, or a template rendered to `true`/`false` later. */
const boolOrTemplate = (description: string) =>
  z
    .union([z.boolean(), template('a boolean (true or false) or a template')], expecting('a boolean or a template'))
    .meta({ description });

/** An integer, or a template rendered to one later. */
const intOrTemplate = (description: string) =>
  z.union([z.int(), template('an integer or a template')], expecting('an integer or a template')).meta({ description });

/** A map of names to scalars (environment variables). */
const envVars = z
  .record(z.string(), text, expecting('a map of variable names to values'))
  .meta({ id: 'EnvVars', description: 'Environment variables: name → value (values are kept as written).' });

/** A free map (vars, metadata, source options). */
const freeMap = (description: string) => z.record(z.string(), z.unknown(), expecting('a map')).meta({ description });

/** Conditions: all must render to `true`. */
const conditions = (what: string) =>
  textList(`Conditions (usually templates); ${what} only when all of them render to a Go boolean true.`);

const obj = <T extends z.core.$ZodLooseShape>(shape: T) => z.strictObject(shape, expecting('a map'));

/** A run step (`run_units.<unit>.<phase>[i]`). */
const runStep = obj({
  name: text.optional().describe('Step name; unique within a unit and phase; the target of `call: <phase>/<name>`.'),
  command: text.optional().describe('Executable to run (looked up on PATH; no shell).'),
  args: text.optional().describe('Arguments as one shell-like command line (quotes group words; no expansion).'),
  env_vars: envVars.optional(),
  working_dir: text.optional().describe("Working directory; defaults to the unit's working_dir."),
  stdout: text.optional().describe("Write the command's standard output to this file (relative to working_dir)."),
  stderr: text.optional().describe("Write the command's standard error to this file (relative to working_dir)."),
  print: text.optional().describe('Echo the output: empty never, `verbose` only with --verbose, anything else always.'),
  expected_exit_code: intOrTemplate('The exit status that counts as success (default 0).').optional(),
  ignore_errors: boolOrTemplate('Continue with the next step when this one fails.').optional(),
  conditions: conditions('the step runs').optional(),
  merge_priority: z
    .int(expecting('an integer from 0 to 255'))
    .min(0, expecting('an integer from 0 to 255'))
    .max(255, expecting('an integer from 0 to 255'))
    .optional()
    .describe('Sort key 0–255 among all steps of the phase; smaller runs first; absent counts as 255.'),
  call: text.optional().describe('Run other steps instead: `<phase>` (all its steps) or `<phase>/<step name>`.'),
  load_outputs: boolOrTemplate("After this step, load the kapp's outputs and re-render its configuration.").optional(),
  timeout: intOrTemplate('Kill the command after this many seconds (0: no limit).').optional(),
  binaries: textList('Extra executables that validation checks for.').optional(),
}).meta({ id: 'RunStep', title: 'Run step' });

const steps = (phase: string) =>
  z.array(runStep, expecting('a list of run steps')).meta({ description: `Steps of the ${phase} phase.` });

/** A run unit (`run_units.<name>`, or the global unit of sugarkube-conf.yaml). */
const runUnit = obj({
  working_dir: text.optional().describe('Default working directory of the steps.'),
  conditions: conditions('the unit contributes steps').optional(),
  binaries: textList('Extra executables that validation checks for.').optional(),
  env_vars: envVars.optional(),
  plan_install: steps('plan_install').optional(),
  apply_install: steps('apply_install').optional(),
  plan_delete: steps('plan_delete').optional(),
  apply_delete: steps('apply_delete').optional(),
  output: steps('output').optional(),
  clean: steps('clean').optional(),
}).meta({ id: 'RunUnit', title: 'Run unit' });

const runUnits = z
  .record(z.string(), runUnit, expecting('a map of run unit names to run units'))
  .meta({ description: 'Run units by name.' });

const sourceFields = {
  id: text.optional().describe('Source id (default: the last component of the path in the URI).'),
  options: freeMap('Source options; `branch` sets the git ref.').optional(),
};

/** A source in a list (`sources: [...]`). */
const sourceItem = obj({
  ...sourceFields,
  uri: text.describe('`<git repository>//<path>#<ref>` or `file://<path>`.'),
}).meta({ id: 'Source', title: 'Source' });

/** A source in a map keyed by id (stack overrides). */
const sourceEntry = obj({
  ...sourceFields,
  uri: text.optional().describe('`<git repository>//<path>#<ref>` or `file://<path>`.'),
}).meta({ id: 'SourceOverride', title: 'Source override' });

const outputFields = {
  path: text.optional().describe("File to read; relative to the directory of the kapp's sugarkube.yaml."),
  format: text.optional().describe('`json`, `yaml` or `text`.'),
  sensitive: bool('Delete the file once it has been read.').optional(),
  conditions: conditions('the output is loaded').optional(),
};

const outputItem = obj({ id: text.describe('Output id (`.outputs.<kapp>.<id>`).'), ...outputFields }).meta({
  id: 'Output',
  title: 'Output',
});
const outputEntry = obj({ id: text.optional().describe('Output id.'), ...outputFields }).meta({
  id: 'OutputOverride',
  title: 'Output override',
});

const templateItem = obj({
  source: text.optional().describe('Template file; relative to the kapp, then to the stack template_dirs.'),
  dest: text.optional().describe('Where to write the rendered file; relative to the kapp.'),
  sensitive: bool('Marks the rendered file as sensitive.').optional(),
  conditions: conditions('the template is rendered').optional(),
}).meta({ id: 'Template', title: 'Template' });

const templates = z
  .record(z.string(), templateItem, expecting('a map of template ids to templates'))
  .meta({ description: 'Templates by id.' });

const dependsOn = z
  .array(
    obj({
      id: text.describe('`<kapp>` (same manifest) or `<manifest>:<kapp>`.'),
      conditions: conditions('the dependency applies').optional(),
    }).meta({ id: 'Dependency', title: 'Dependency' }),
    expecting('a list of dependencies'),
  )
  .meta({ description: 'Kapps this kapp depends on.' });

const action = z
  .record(
    z.string(),
    obj({ params: z.array(z.unknown(), expecting('a list')).optional().describe('Action parameters.') }).nullable(),
    expecting('a map of an action id to its parameters'),
  )
  .meta({ id: 'Action', description: '`{<action id>: {params: [...]}}` or `{<action id>: null}`.' });
const actions = (when: string) =>
  z.array(action, expecting('a list of actions')).meta({ description: `Actions run ${when}.` });

/** Fields every descriptor fragment may have (Sugarkube's KappConfig). */
const kappConfigShape = {
  requires: textList('Programs (from sugarkube-conf.yaml) whose defaults this kapp uses.').optional(),
  vars: freeMap('Kapp variables (`.kapp.vars`).').optional(),
  templates: templates.optional(),
  run_units: runUnits.optional(),
  depends_on: dependsOn.optional(),
  conditions: conditions('the kapp is processed').optional(),
  pre_install_actions: actions('before apply_install').optional(),
  post_install_actions: actions('after apply_install').optional(),
  pre_delete_actions: actions('before apply_delete').optional(),
  post_delete_actions: actions('after apply_delete').optional(),
  ignore_global_defaults: bool('Use neither program defaults nor the global run unit.').optional(),
  metadata: freeMap('Free metadata.').optional(),
};

/** A descriptor without identity (manifest and stack `defaults`). */
const kappConfig = obj(kappConfigShape).meta({ id: 'KappDefaults', title: 'Kapp defaults' });

/** A kapp's own sugarkube.yaml (sources and outputs as lists). */
export const kappDescriptor = obj({
  id: text.optional().describe('Kapp id (the manifest entry sets it).'),
  sources: z.array(sourceItem, expecting('a list of sources')).optional().describe('Sources to fetch.'),
  outputs: z.array(outputItem, expecting('a list of outputs')).optional().describe('Outputs to load.'),
  ...kappConfigShape,
}).meta({ title: 'kapps kapp descriptor (sugarkube.yaml)' });

/** A manifest's kapp entry: a descriptor with lists and a required id. */
const manifestKapp = obj({
  id: text.describe('Kapp id: unique in the manifest; no `.`, `:` or `*`.'),
  sources: z.array(sourceItem, expecting('a list of sources')).optional().describe('Sources to fetch.'),
  outputs: z.array(outputItem, expecting('a list of outputs')).optional().describe('Outputs to load.'),
  ...kappConfigShape,
}).meta({ id: 'ManifestKapp', title: 'Manifest kapp' });

/** A stack override: a descriptor with sources and outputs as maps keyed by id. */
const kappOverride = obj({
  id: text.optional().describe('Kapp id.'),
  sources: z
    .record(z.string(), sourceEntry, expecting('a map of source ids to sources'))
    .optional()
    .describe('Sources by id.'),
  outputs: z
    .record(z.string(), outputEntry, expecting('a map of output ids to outputs'))
    .optional()
    .describe('Outputs by id.'),
  ...kappConfigShape,
}).meta({ id: 'KappOverride', title: 'Kapp override' });

/** The descriptor fields a program in sugarkube-conf.yaml honours. */
export const PROGRAM_FIELDS = ['vars', 'run_units', 'templates', 'conditions', 'requires', 'metadata'] as const;

const program = obj({
  vars: kappConfigShape.vars,
  run_units: kappConfigShape.run_units,
  templates: kappConfigShape.templates,
  conditions: kappConfigShape.conditions,
  requires: kappConfigShape.requires,
  metadata: kappConfigShape.metadata,
}).meta({ id: 'Program', title: 'Program', description: 'Defaults for kapps that list the program in `requires`.' });

/** A manifest file. */
export const manifestFile = obj({
  defaults: kappConfig.optional().describe('Defaults for every kapp of the manifest.'),
  options: obj({
    sequential: bool('Each kapp depends on the previous one.').optional(),
  })
    .optional()
    .describe('Manifest options.'),
  kapps: z.array(manifestKapp, expecting('a list of kapps')).optional().describe('Kapps in order.'),
  filepath: text.optional().describe('Accepted and unused.'),
}).meta({ title: 'kapps manifest' });

const manifestRef = obj({
  uri: text.describe('Path of the manifest file, relative to the stack file.'),
  id: text.optional().describe('Manifest id (default: the file name without extension).'),
  versions: z
    .record(z.string(), text, expecting('a map of `<kapp>/<source>` to versions'))
    .optional()
    .describe("`<kapp id>/<source id>` → version: sets that source's `options.branch`."),
  overrides: z
    .record(z.string(), kappOverride, expecting('a map of kapp ids to overrides'))
    .optional()
    .describe('Per-kapp overrides, by kapp id.'),
}).meta({ id: 'ManifestRef', title: 'Manifest reference' });

const dirs = (what: string) => textList(`${what}, relative to the stack file.`);

/** One stack of a stack file. */
export const stackEntry = obj({
  name: text.optional().describe('Stack name (default: the key of this stack in the file).'),
  provider: text.optional().describe('Provider name (e.g. `local`, `aws`), used by vars-file lookup.'),
  provisioner: text.optional().describe('Provisioner name (e.g. `none`, `minikube`); informational.'),
  account: text.optional().describe('Account name.'),
  region: text.optional().describe('Region name.'),
  profile: text.optional().describe('Profile name.'),
  cluster: text.optional().describe('Cluster name.'),
  provider_vars_dirs: dirs('Directories searched for provider vars files').optional(),
  kapp_vars_dirs: dirs('Directories searched for kapp vars files').optional(),
  template_dirs: dirs('Directories searched for template sources').optional(),
  manifests: z.array(manifestRef, expecting('a list of manifests')).optional().describe('Manifests in order.'),
  defaults: kappConfig.optional().describe('Defaults for every kapp of the stack (above manifest settings).'),
  vars: freeMap('Stack variables (top level of the variable map, above provider vars).').optional(),
  filepath: text.optional().describe('Not supported; ignored.'),
}).meta({ id: 'Stack', title: 'Stack' });

/** A stack file: stack name → stack. */
export const stackFile = z
  .record(z.string(), stackEntry, expecting('a map of stack names to stacks'))
  .meta({ title: 'kapps stack file' });

/** sugarkube-conf.yaml. */
export const projectConfigFile = obj({
  num_workers: z
    .int(expecting('a positive integer'))
    .min(1, expecting('a positive integer'))
    .optional()
    .describe('How many kapps run at the same time (default 5).'),
  programs: z
    .record(z.string(), program, expecting('a map of program names to programs'))
    .optional()
    .describe('Programs by name.'),
  run_units: runUnit.optional().describe('The global run unit, added to every kapp as `sugarkube_config_file`.'),
  log_level: text.optional().describe('Log level: none, trace, debug, info, warn, error or fatal.'),
  json_logs: bool('Log as JSON.').optional(),
  no_color: bool('Disable colours.').optional(),
  verbose: bool('Show commands and more output.').optional(),
  project: text.optional().describe('Project name recorded with releases.'),
  backend: text.optional().describe('Release store: a directory path or a postgres:// URL.'),
  source_substitutions: z
    .array(
      obj({
        prefix: text.describe('Start of a git source repository URL, e.g. `https://github.com/sugarkube/kapps.git`.'),
        replace: text.describe(
          'What replaces it: a local path (relative to this file), `file://<path>` (copy the folder) or another URL.',
        ),
      }),
      expecting('a list of {prefix, replace} maps'),
    )
    .optional()
    .describe('Fetch git sources from local copies or a mirror instead: the first matching prefix is replaced.'),
}).meta({ title: 'kapps project configuration (sugarkube-conf.yaml)' });

/** The descriptor keys, for recognising descriptor fields a program ignores. */
export const DESCRIPTOR_FIELDS: readonly string[] = Object.keys(kappDescriptor.shape);
