/**
 * Runs once before all tests: checks that the CLI was built (`npm test` builds first).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const cli = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
  if (!existsSync(cli)) throw new Error(`The CLI is not built (${cli} is missing): run \`npm run build\` first.`);
}
