/**
 * PostgreSQL in tests: the run's throwaway server (started by the global setup), fresh databases that a test file
 * drops when it ends, and one-off queries.
 */
import pg from 'pg';
import { inject } from 'vitest';

/** The PostgreSQL URL of the run; fails (never skips) with the reason when the server is not there. */
export function pgUrl(): string {
  const url = inject('pgUrl');
  if (!url) throw new Error(`the PostgreSQL test server is not running: ${inject('pgError')}`);
  return url;
}

/** Run one statement on a connection of its own; its rows. */
export async function sql<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Fresh databases of one test file: `create()` makes one (its URL), `dropAll()` (in `afterAll`) drops them all. */
export interface FreshDatabases {
  create(): Promise<string>;
  dropAll(): Promise<void>;
}

/** Fresh databases named `<prefix>_<pid>_<n>_<random>` on the run's server (several test files share it). */
export function freshDatabases(prefix: string): FreshDatabases {
  const names: string[] = [];
  return {
    async create() {
      const name = `${prefix}_${process.pid}_${names.length}_${Math.random().toString(36).slice(2, 8)}`;
      await sql(pgUrl(), `CREATE DATABASE ${name}`);
      names.push(name);
      const url = new URL(pgUrl());
      url.pathname = `/${name}`;
      return url.toString();
    },
    async dropAll() {
      if (names.length === 0) return;
      const client = new pg.Client({ connectionString: pgUrl() });
      await client.connect();
      try {
        for (const name of names.splice(0)) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
