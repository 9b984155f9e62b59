// Make the compiled CLI entry executable, so `dist/cli/main.js` runs directly (npm sets the bit on install).
import { chmodSync } from 'node:fs';
chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
