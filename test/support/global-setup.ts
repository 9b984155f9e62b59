/**
 * Runs once before all tests: checks that the CLI was built (`npm test` builds first), and starts a throwaway
 * PostgreSQL server on loopback for the release store tests (stopped after the run). When PostgreSQL cannot start,
 * the tests that need it fail with the reason (`inject('pgError')`); the other tests are not affected.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startPostgres, type TestPostgres } from './postgres.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cli = fileURLToPath(new URL('../../dist/bin/kapps.js', import.meta.url));
  if (!existsSync(cli)) throw new Error(`The CLI is not built (${cli} is missing): run \`npm run build\` first.`);

  let server: TestPostgres | undefined;
  // If vitest dies before its teardown (e.g. its output pipe closed), still stop the server rather than orphan it.
  const stopOnExit = (): void => {
    if (!server) return;
    try {
      process.kill(server.pid, 'SIGINT');
    } catch {
      // already gone
    }
  };
  try {
    server = await startPostgres();
    process.once('exit', stopOnExit);
    project.provide('pgUrl', server.url);
    project.provide('pgError', '');
  } catch (error) {
    project.provide('pgUrl', '');
    project.provide('pgError', error instanceof Error ? error.message : String(error));
  }
  return async () => {
    process.off('exit', stopOnExit);
    await server?.stop();
  };
}
