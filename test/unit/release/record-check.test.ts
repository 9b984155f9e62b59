/**
 * The quick check of release records (src/release/record-check.ts): it says "valid" only where zod accepts the
 * record and gives it back unchanged, so a record read through it is the one zod would have returned, and every
 * bad record still gets zod's words.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { plainCheckOf } from '../../../src/release/record-check.js';
import { parseReleaseRecord, releaseReadSchema as readSchema } from '../../../src/release/record-schema.js';
import { ReleaseRecordError } from '../../../src/release/errors.js';
import { makeRelease, stackSpec } from './helpers.js';
import { data } from './record-arbitraries.js';

/** A recorded release with a kapp's state, steps, outputs and the optional fields set. */
function sample(): Record<string, unknown> {
  const release = makeRelease('proj', 'dev', 3, {
    spec: stackSpec(['a', 'b']),
    source: { repo: 'https://git.example/infra.git', commit: 'a'.repeat(40), path: 'stacks.yaml' },
    approvals: [{ by: 'alice', at: '2026-11-27T05:00:00.000Z', comment: null }],
    state: {
      a: {
        status: 'installed',
        outputs: { info: { endpoint: 'https://a', port: 443, tags: ['x', null, true] } },
        steps: [
          {
            phase: 'apply_install',
            name: 'apply',
            status: 'succeeded',
            exitCode: 0,
            startedAt: '2026-11-27T05:00:00.000Z',
            endedAt: '2026-11-27T05:00:01.500+01:00',
            durationMs: 1500,
            timedOut: false,
          },
        ],
        specDigest: 'f'.repeat(64),
        specFormat: 2,
        revision: 3,
        updatedAt: '2026-11-27T05:00:01.500Z',
      },
    },
  });
  return JSON.parse(JSON.stringify(release)) as Record<string, unknown>;
}

/** zod's own answer for the record (the schema records are read with). */
function zodParse(record: unknown): { ok: true; value: unknown } | { ok: false } {
  const r = readSchema.safeParse(record);
  return r.success ? { ok: true, value: r.data } : { ok: false };
}

/** Every path to a value in `value` (objects and arrays), as key lists. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [prefix];
  const out: (string | number)[][] = [prefix];
  for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, Array.isArray(value) ? Number(k) : k]));
  return out;
}

function setAt(root: unknown, at: readonly (string | number)[], value: unknown): unknown {
  if (at.length === 0) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let cur = copy;
  for (const k of at.slice(0, -1)) cur = cur[k] as Record<string | number, unknown>;
  const last = at[at.length - 1] as string | number;
  if (value === undefined) delete cur[last];
  else cur[last] = value;
  return copy;
}

describe('the quick check of release records', () => {
  it('takes a well-formed record as it is: the same object, equal to what zod gives back', () => {
    const record = sample();
    expect(plainCheckOf(readSchema)?.(record)).toBe(true);
    expect(parseReleaseRecord(record, 'r.yaml')).toBe(record);
    expect(zodParse(record)).toEqual({ ok: true, value: record });
  });

  it('never says yes to a record zod refuses or would change: any field removed, retyped or replaced', () => {
    const record = sample();
    const check = plainCheckOf(readSchema);
    expect(check).toBeDefined();
    const all = paths(record).filter((p) => p.length > 0);
    const replacements = fc.oneof(
      fc.constant(undefined),
      fc.constantFrom(null, '', 'x', '2026-11-27', '2026-11-27T05:00:00Z', -1, 0, 1, 1.5, Infinity, true, [], {}),
      data,
    );
    fc.assert(
      fc.property(fc.constantFrom(...all), replacements, (at, value) => {
        const changed = setAt(record, at, value);
        const zod = zodParse(changed);
        if (check?.(changed)) {
          // A yes must be zod's yes, with the same data.
          expect(zod).toEqual({ ok: true, value: changed });
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('sends what zod would refuse to zod, which names the field', () => {
    const record = sample();
    const bad = setAt(record, ['state', 'a', 'steps', 0, 'startedAt'], 'yesterday');
    expect(plainCheckOf(readSchema)?.(bad)).toBe(false);
    expect(() => parseReleaseRecord(bad, 'r.yaml')).toThrow(ReleaseRecordError);
    expect(() => parseReleaseRecord(bad, 'r.yaml')).toThrow(/state\.a\.steps\.0\.startedAt/);
  });

  it('is not sure of an object zod strips (an unknown key it would drop) or a feature it does not know', () => {
    const strip = plainCheckOf(z.object({ a: z.string() }));
    expect(strip?.({ a: 'x' })).toBe(true);
    expect(strip?.({ a: 'x', b: 1 })).toBe(false);
    expect(plainCheckOf(z.string().transform((s) => s.length))).toBeUndefined();
    expect(plainCheckOf(z.object({ n: z.number().default(1) }))).toBeUndefined();
    expect(plainCheckOf(z.string().email())).toBeUndefined();
  });
});
