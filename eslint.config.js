import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: ['dist/**', 'node_modules/**', 'coverage/**', '**/.kapps-workspace/**', 'bench/out/**', 'test-results/**'],
  },
  eslint.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
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
    { files: ['src/server/**/*.ts'], ignores: ['src/server/queue/**', 'src/server/runs/**'], forbid: ['cli'] },
    // The queue (the run stores) and the runs (the executor, the engine adapter) know nothing of HTTP.
    { files: ['src/server/queue/**/*.ts', 'src/server/runs/**/*.ts'], ignores: [], forbid: ['cli', 'http'] },
    // The public contract is shared by the server, the CLI client and the page: it imports nothing of kapps.
    { files: ['src/api/**/*.ts'], ignores: [], forbid: ['cli', 'server', 'engine', 'release', 'execute'] },
    { files: ['src/cli/**/*.ts'], ignores: [], forbid: [] },
  ].map(({ files, ignores, forbid }) => ({
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
            message: `Nothing imports src/${folder}/ (imports go one way: cli → server → engine → the rest).`,
          })),
        },
      ],
    },
  })),
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
