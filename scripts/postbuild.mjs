// Make the tsc output's CLI entry executable, so `dist/cli/main.js` runs directly too (the command users run is the
// bundle, dist/bin/kapps.js, made by scripts/bundle.mjs; the tests compare the two).
import { chmodSync } from 'node:fs';
chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
