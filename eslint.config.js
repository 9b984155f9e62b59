import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import { dirname, relative, resolve } from 'node:path';

const repoSrc = resolve(import.meta.dirname, 'src');
const inside = (dir, path) => {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'));
};

/** web/ imports the repository's src/ only through src/api/, and values only from its zod-free modules. */
const webImports = {
  meta: { type: 'problem', schema: [] },
  create(context) {
    const check = (node, typeOnly) => {
      const source = node.source?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = resolve(dirname(context.filename), source);
      if (!inside(repoSrc, target)) return;
      const api = resolve(repoSrc, 'api');
      if (!inside(api, target)) {
        context.report({
          node,
          message: `web/ imports from src/ only through src/api/ (the public contract): ${source}`,
        });
      } else if (!typeOnly && !['constants', 'sse-parse'].includes(relative(api, target).replace(/\.(js|ts)$/, ''))) {
        context.report({
          node,
          message: `web/ takes values from src/api/constants or src/api/sse-parse only (the schemas pull zod in); use \`import type\` for ${source}`,
        });
      }
    };
    return {
      ImportDeclaration: (node) =>
        check(
          node,
          node.importKind === 'type' ||
            (node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === 'type')),
        ),
      ExportNamedDeclaration: (node) => check(node, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => check(node, node.exportKind === 'type'),
    };
  },
};

export default defineConfig(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '**/.kapps-workspace/**', 'bench/out/**', 'test-results/**'],
  },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: ['./tsconfig.json', './web/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/report/**'],
    rules: { 'no-console': 'error' },
  },
  // Only src/process/ starts processes; nothing imports the CLI (the composition root) or the runs server, except the
  // CLI, which starts the server.
  ...[
    { files: ['src/**/*.ts'], ignores: ['src/process/**', 'src/cli/**', 'src/server/**'], forbid: ['cli', 'server'] },
    {
      files: ['src/server/**/*.ts'],
      ignores: ['src/server/{queue,runs,sources,triggers,notify,drift,checks}/**'],
      forbid: ['cli'],
    },
    // The queue (the run stores), the runs (the executor, the engine adapter), the projects' repositories, what
    // starts runs (webhooks, polling), the notifications and the run checks know nothing of HTTP.
    {
      files: ['src/server/{queue,runs,sources,triggers,notify,drift,checks}/**/*.ts'],
      ignores: [],
      forbid: ['cli', 'http'],
    },
    // The public contract is shared by the server, the CLI client and the page: it imports nothing of kapps.
    { files: ['src/api/**/*.ts'], ignores: [], forbid: ['cli', 'server', 'engine', 'release', 'execute'] },
    { files: ['src/cli/**/*.ts'], ignores: [], forbid: [] },
    // The YAML reader is below the configuration: it reads text into located nodes and Go values, and imports only
    // diagnostics, Go's value model and the run vocabulary.
    {
      files: ['src/yaml/**/*.ts'],
      ignores: [],
      forbid: [
        ...['cli', 'server', 'api', 'engine', 'stack', 'plan', 'execute', 'process', 'release', 'pg', 'report'],
        ...['config', 'template', 'vars', 'workspace'],
      ],
      below: 'src/yaml/ reads YAML for the layers above it',
    },
    // What every store shares (PostgreSQL plumbing, the one log) sits on the ground: it knows no store, no server.
    {
      files: ['src/pg/**/*.ts', 'src/log/**/*.ts'],
      ignores: [],
      forbid: [
        ...['cli', 'server', 'api', 'engine', 'stack', 'plan', 'execute', 'process', 'release', 'report'],
        ...['config', 'template', 'vars', 'workspace', 'yaml'],
      ],
      below: 'src/pg/ and src/log/ serve every store',
    },
    // What shows a run knows its events, not what runs it.
    {
      files: ['src/report/**/*.ts'],
      ignores: [],
      forbid: ['cli', 'server', 'engine', 'stack', 'plan', 'execute', 'process', 'pg'],
      below: 'src/report/ shows the events the layers above it emit',
    },
  ].map(({ files, ignores, forbid, below }) => ({
    files,
    ignores,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'execa', message: 'Only src/process/ starts processes.' },
            { name: 'node:child_process', message: 'Only src/process/ starts processes.', allowTypeImports: true },
            { name: 'child_process', message: 'Only src/process/ starts processes.', allowTypeImports: true },
          ],
          patterns: forbid.map((folder) => ({
            group: [`**/${folder}/*`],
            message: below
              ? `${below}: it imports nothing of src/${folder}/ (imports go one way).`
              : `Nothing imports src/${folder}/ (imports go one way: cli → server → engine → the rest).`,
          })),
        },
      ],
    },
  })),
  // The page talks only to the public API: of the repository's src/ it imports src/api/ alone, and of that, at run
  // time, only what needs no zod (the constants, the event stream parser); the schemas' types are `import type`.
  {
    files: ['web/**/*.ts', 'web/**/*.tsx'],
    plugins: { kapps: { rules: { 'web-imports': webImports } } },
    rules: { 'kapps/web-imports': 'error' },
  },
  {
    files: ['src/vocabulary.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ group: ['./*', '../*'], message: 'The run vocabulary imports nothing of kapps.' }] },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
