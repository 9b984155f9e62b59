import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** The version from package.json (dist/cli/version.js → ../../package.json). */
export function kappsVersion(): string {
  if (cached === undefined) {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    cached = pkg.version;
  }
  return cached;
}
