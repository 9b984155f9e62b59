// The CLI as users run it: an esbuild bundle, flat in dist/bin/ — `kapps.js` (the CLI, with its #! line) and
// `process-server.js` (the process server), with the modules that commands load lazily (dynamic imports) split
// into chunks beside them. Flat, so that `new URL('./process-server.js', import.meta.url)` and
// `new URL('../web/', import.meta.url)` resolve the same from a chunk here as from the tsc output in dist/<folder>/.
// Packages with native or optional parts stay external (loaded from node_modules at run time).
// KAPPS_BUNDLE_META=<file> writes esbuild's metafile there (which modules went into which chunk).
import { build } from 'esbuild';
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/bin`;

/**
 * Not bundled: `pg` (its optional `pg-native` binding is required on demand) and the server's fastify family
 * (fastify's logger starts worker threads from files of its own package), loaded from node_modules at run time.
 * fastify-type-provider-zod is bundled, so that it works on the same zod as kapps' schemas.
 */
const external = ['pg', 'pg-native', 'fastify', '@fastify/*', 'pino', 'thread-stream'];

/**
 * A package loaded with `import()` stays external: Node then gives a CommonJS package its named exports, which a
 * bundled one would lack (only `default`). To bundle a package and still load it lazily, import it statically from
 * a module of kapps and `import()` that module (as src/yaml/stringify.ts does).
 */
const dynamicPackagesExternal = {
  name: 'dynamic-packages-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.kind === 'dynamic-import' && !args.path.startsWith('node:')
        ? { path: args.path, external: true }
        : undefined,
    );
  },
};

/**
 * `string-width` (yargs' help layout, listr2's task list) segments every string into graphemes and tests each one
 * against Unicode property regexps: it was half of `kapps --help`, and yargs lays out the help of the command that
 * runs even when nothing shows it. A string of printable ASCII characters is as wide as it is long, so every import
 * of the package gets that answer first (the typographic quotes, dashes and ellipsis of kapps' texts count as
 * printable ASCII: the build checks that each package takes them as one column), and the package's own answer
 * otherwise, remembered (wrap-ansi asks for each character of a word in turn). The package also builds an
 * `Intl.Segmenter` when it loads (loading ICU's data: tens of milliseconds, paid by every command): it is built on
 * first use instead; should a new version of the package no longer start that way, the build fails, to be looked
 * at again.
 */
const asciiStringWidth = {
  name: 'ascii-string-width',
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.pluginData === 'real') return undefined;
      const real = await b.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: 'real',
      });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'ascii-string-width' };
    });
    b.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/, namespace: 'file' }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      const eager = 'const segmenter = new Intl.Segmenter();';
      if (!source.includes(eager)) return { errors: [{ text: `${args.path} no longer starts with \`${eager}\`` }] };
      const lazy =
        'let intlSegmenter;\n' +
        'const segmenter = { segment: (text) => (intlSegmenter ??= new Intl.Segmenter()).segment(text) };';
      const contents = lazyPropertyRegexps(source.replace(eager, lazy), args.path);
      const wrong = await differentWidths(args.path, contents);
      if (wrong) return { errors: [{ text: `${args.path} changed for the bundle measures ${wrong}` }] };
      return { contents, loader: 'js' };
    });
    b.onLoad({ filter: /.*/, namespace: 'ascii-string-width' }, async (args) => {
      const { default: real } = await import(pathToFileURL(args.path).href);
      for (const c of NARROW_PUNCTUATION) {
        if (real(c) !== 1) return { errors: [{ text: `${args.path} says ${c} is ${real(c)} columns wide` }] };
      }
      return asciiWrapper(args.path);
    });
  },
};

/**
 * The package's regular expressions of Unicode properties (`/^\p{RGI_Emoji}$/v` alone takes 15–20 ms to build, as
 * Node loads the property's sets) are built on first use rather than when the module loads: each top-level
 * `const name = /…\p{…}…/flags;` becomes `let name$lazy;` and each use of `name` `(name$lazy ??= /…/flags)`. Only
 * text that is not printable ASCII reaches the package (asciiWrapper), so most commands never build them. Should the
 * package no longer declare them so, the build fails, to be looked at again.
 */
function lazyPropertyRegexps(source, file) {
  const declaration = /^const (\w+) = (\/.*\\p\{.*\/[a-z]*);$/gm;
  let out = source;
  for (const [line, name, literal] of source.matchAll(declaration)) {
    out = out.replace(line, `let ${name}$lazy;`);
    out = out.replace(new RegExp(`\\b${name}\\b(?!\\$lazy)`, 'g'), `(${name}$lazy ??= ${literal})`);
  }
  // Any regular expression of Unicode properties still built as the module loads (declared another way).
  const eager = /^(?:const|let|var) \w+ = (?:\/.*\\p\{|new RegExp\()/m.exec(out);
  if (eager) throw new Error(`${file} builds a regular expression when it loads: ${eager[0]}`);
  return out;
}

/** Texts whose width takes each of string-width's paths: emoji, keycaps, CJK, Hangul, marks, controls, ANSI colours. */
const WIDTH_SAMPLES = [
  'abc',
  '\u{1F600}',
  '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}',
  '1\u20E3',
  '\u2764\uFE0F',
  '\u4F60\u597D',
  '\u1100\u1161\u11A8',
  'e\u0301',
  '\u0915\u093F',
  'a\u200Bb',
  '\u001B[31mred\u001B[39m',
  '\u00AD',
  '\uFF21',
];

/**
 * Whether the package as changed for the bundle (`contents`, loaded from a file beside the package's own, so that its
 * imports resolve the same) measures any sample differently from the package itself: the text and both widths, or
 * undefined when they all agree.
 */
async function differentWidths(realPath, contents) {
  const copy = `${realPath.replace(/index\.js$/, '')}.kapps-bundle-check-${process.pid}.mjs`;
  writeFileSync(copy, contents);
  try {
    const { default: changed } = await import(pathToFileURL(copy).href);
    const { default: real } = await import(pathToFileURL(realPath).href);
    for (const text of WIDTH_SAMPLES) {
      if (changed(text) !== real(text)) return `${JSON.stringify(text)} as ${changed(text)} columns, not ${real(text)}`;
    }
    return undefined;
  } finally {
    rmSync(copy, { force: true });
  }
}

/** Typographic characters of kapps' help and messages, one column wide (unless `ambiguousIsNarrow: false`). */
const NARROW_PUNCTUATION = ['\u2013', '\u2014', '\u2018', '\u2019', '\u201c', '\u201d', '\u2026'];

/** The module that stands for the `string-width` at `realPath`. */
function asciiWrapper(realPath) {
  return {
    resolveDir: root,
    loader: 'js',
    contents:
      `import stringWidth from ${JSON.stringify(realPath)};\n` +
      'const printableAscii = /^[\\x20-\\x7e]*$/;\n' +
      `const narrowText = /^[\\x20-\\x7e${NARROW_PUNCTUATION.join('')}]*$/;\n` +
      'const known = new Map();\n' +
      'export default function asciiStringWidth(text, options) {\n' +
      "  if (typeof text !== 'string') return stringWidth(text, options);\n" +
      '  if (printableAscii.test(text)) return text.length;\n' +
      '  if (options !== undefined) return stringWidth(text, options);\n' +
      '  if (narrowText.test(text)) return text.length;\n' +
      '  let width = known.get(text);\n' +
      '  if (width === undefined) {\n' +
      '    width = stringWidth(text);\n' +
      '    if (known.size >= 10000) known.clear();\n' +
      '    known.set(text, width);\n' +
      '  }\n' +
      '  return width;\n' +
      '}\n',
  };
}

/**
 * yargs takes `strictEqual` and `notStrictEqual` from `assert` to check its own arguments; loading node:assert
 * (which loads node:stream and more) was a tenth of `kapps --help`. It gets the same checks, which load node:assert
 * only to fail as it would.
 */
const lazyAssert = {
  name: 'lazy-assert',
  setup(b) {
    b.onResolve({ filter: /^(node:)?assert$/ }, (args) =>
      /[\\/]node_modules[\\/]yargs[\\/]/.test(args.importer) ? { path: 'assert', namespace: 'lazy-assert' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-assert' }, () => ({
      loader: 'js',
      contents:
        "import { createRequire } from 'node:module';\n" +
        "const assert = () => createRequire(import.meta.url)('node:assert');\n" +
        'export function strictEqual(actual, expected, message) {\n' +
        '  if (!Object.is(actual, expected)) assert().strictEqual(actual, expected, message);\n' +
        '}\n' +
        'export function notStrictEqual(actual, expected, message) {\n' +
        '  if (Object.is(actual, expected)) assert().notStrictEqual(actual, expected, message);\n' +
        '}\n',
    }));
  },
};

/**
 * CommonJS packages inside an ES module bundle still call `require` (for node: built-ins): each file starts by making
 * one. Only esbuild's runtime (one chunk) and a file that names `require` itself use it, and a command loads dozens
 * of chunks: in the others the two lines are blanked (not removed, so that the source maps' lines still match).
 */
const REQUIRE_BANNER =
  "import { createRequire as __kappsCreateRequire } from 'node:module';\nconst require = __kappsCreateRequire(import.meta.url);";

function withoutUnusedRequire(text) {
  const at = text.indexOf(REQUIRE_BANNER);
  if (at < 0) return text;
  const rest = text.slice(0, at) + text.slice(at + REQUIRE_BANNER.length);
  // Any `require` not part of a longer name or a property: kept, whatever it is.
  return /(?<![\w$.])require(?![\w$])/.test(rest)
    ? text
    : `${text.slice(0, at)}\n${text.slice(at + REQUIRE_BANNER.length)}`;
}

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { kapps: 'src/cli/main.ts', 'process-server': 'src/process/process-server.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // The chunks sit beside the entries: no sub-folder, so import.meta.url means the same folder in every file.
  chunkNames: 'chunk-[hash]',
  entryNames: '[name]',
  external,
  plugins: [dynamicPackagesExternal, asciiStringWidth, lazyAssert],
  banner: { js: REQUIRE_BANNER },
  sourcemap: 'linked',
  // Less text for Node to read and parse at every start (a tenth of generate's instructions), names kept as written
  // (identifiers are not shortened): what the code does and says is the same.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
  write: false,
});
if (result.errors.length > 0) process.exit(1);
mkdirSync(outdir, { recursive: true });
for (const file of result.outputFiles) {
  writeFileSync(file.path, file.path.endsWith('.js') ? withoutUnusedRequire(file.text) : file.contents);
}
if (process.env.KAPPS_BUNDLE_META) writeFileSync(process.env.KAPPS_BUNDLE_META, JSON.stringify(result.metafile));
chmodSync(`${outdir}/kapps.js`, 0o755);
for (const f of readdirSync(outdir, { withFileTypes: true })) {
  if (f.isDirectory()) throw new Error(`dist/bin must stay flat, but esbuild made ${f.name}/`);
}
