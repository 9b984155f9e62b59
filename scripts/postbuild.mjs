// Make the tsc output's CLI entry executable, so `dist/cli/main.js` runs directly too (the command users run is the
// bundle, dist/bin/kapps.js, made by scripts/bundle.mjs; the tests compare the two). Copy the PostgreSQL migrations
// (src/pg/migrations/*.sql) to dist/pg/migrations/, where both the tsc output (dist/pg/) and the bundle (dist/bin/)
// read them (`../pg/migrations/` from either).
import { chmodSync, cpSync, rmSync } from 'node:fs';
chmodSync(new URL('../dist/cli/main.js', import.meta.url), 0o755);
const migrations = new URL('../dist/pg/migrations/', import.meta.url);
rmSync(migrations, { recursive: true, force: true });
cpSync(new URL('../src/pg/migrations/', import.meta.url), migrations, { recursive: true });
