import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  applyRefresh,
  computePreview,
  countActions,
  formatPreviewTable,
  previewDocument,
} from '../../../src/release/preview.js';
import { specDigest } from '../../../src/release/canonical-json.js';
import type { RefreshResult } from '../../../src/release/preview.js';
import type { KappState, ReleaseState } from '../../../src/release/types.js';
import { specKapp } from './helpers.js';

function entry(status: KappState['status'], digest: string): KappState {
  return { status, specDigest: digest, revision: 1, updatedAt: '2026-01-01T00:00:00.000Z', outputs: {}, steps: [] };
}

describe('specDigest', () => {
  it('is the sha256 of the canonical JSON (sorted keys) without the selected flag', () => {
    const kapp = specKapp('web:api');
    const { selected: _selected, ...rest } = kapp;
    const sortedJson = JSON.stringify(rest, Object.keys(flatKeys(rest)).sort());
    expect(specDigest(kapp)).toBe(createHash('sha256').update(sortedJson).digest('hex'));
    expect(specDigest(kapp)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('does not depend on key order or on the selected flag', () => {
    const kapp = specKapp('web:api');
    const reordered = Object.fromEntries(Object.entries(kapp).reverse()) as typeof kapp;
    expect(specDigest(reordered)).toBe(specDigest(kapp));
    expect(specDigest({ ...kapp, selected: false })).toBe(specDigest(kapp));
  });

  it('changes when anything else in the spec changes', () => {
    const kapp = specKapp('web:api', '1');
    expect(specDigest(specKapp('web:api', '2'))).not.toBe(specDigest(kapp));
    expect(specDigest({ ...kapp, conditionsOk: false })).not.toBe(specDigest(kapp));
    expect(specDigest({ ...kapp, dependsOn: ['web:db'] })).not.toBe(specDigest(kapp));
  });
});

describe('computePreview', () => {
  const a = { id: 'm:a', specDigest: 'A1' };
  const b = { id: 'm:b', specDigest: 'B2' };
  const c = { id: 'm:c', specDigest: 'C1' };
  const d = { id: 'm:d', specDigest: 'D1' };

  it('creates everything when the stack has no release yet', () => {
    expect(computePreview([a, b], undefined)).toEqual([
      { id: 'm:a', action: 'Create' },
      { id: 'm:b', action: 'Create' },
    ]);
  });

  it('gives Create, Update, UnChanged and Delete in stack order, then deletions by id', () => {
    const state: ReleaseState = {
      'm:z': entry('installed', 'Z1'),
      'm:a': entry('installed', 'A1'),
      'm:b': entry('installed', 'B1'),
      'm:c': entry('failed', 'C1'),
      'm:d': entry('deleted', 'D1'),
      'm:y': entry('installed', 'Y1'),
      'm:x': entry('deleted', 'X1'),
    };
    const rows = computePreview([d, c, b, a], state);
    expect(rows).toEqual([
      { id: 'm:d', action: 'Create' },
      { id: 'm:c', action: 'Create' },
      { id: 'm:b', action: 'Update' },
      { id: 'm:a', action: 'UnChanged' },
      { id: 'm:y', action: 'Delete' },
      { id: 'm:z', action: 'Delete' },
    ]);
    expect(countActions(rows)).toEqual({ Create: 2, Update: 1, UnChanged: 1, Delete: 2 });
  });

  it('treats skipped and cancelled entries as not installed', () => {
    const state: ReleaseState = { 'm:a': entry('skipped', 'A1'), 'm:b': entry('cancelled', 'B2') };
    expect(computePreview([a, b], state).map((r) => r.action)).toEqual(['Create', 'Create']);
  });

  it('is not fooled by ids that are Object.prototype names', () => {
    expect(computePreview([{ id: 'constructor', specDigest: 'x' }], {})).toEqual([
      { id: 'constructor', action: 'Create' },
    ]);
  });
});

describe('preview output', () => {
  it('prints a two-column table', () => {
    expect(
      formatPreviewTable([
        { id: 'web:api', action: 'Create' },
        { id: 'database:postgres', action: 'UnChanged' },
      ]),
    ).toBe('ID                 ACTION\nweb:api            Create\ndatabase:postgres  UnChanged\n');
    expect(formatPreviewTable([])).toBe('No kapps to preview.\n');
  });

  it('has a stable JSON shape', () => {
    const doc = previewDocument('dev', 'shop', 3, [{ id: 'web:api', action: 'Update' }]);
    expect(JSON.stringify(doc)).toBe(
      '{"stack":"dev","project":"shop","basedOnRevision":3,"kapps":[{"id":"web:api","action":"Update",' +
        '"from":null,"to":null,"changes":[],"drift":[],"reason":null,"specDigest":null,"notRecorded":[]}],' +
        '"refreshed":null,"hasChanges":true}',
    );
    expect(previewDocument('dev', 'shop', null, []).basedOnRevision).toBeNull();
  });
});

/** Every key at any depth, so JSON.stringify's replacer list sorts all of them. */
function flatKeys(value: unknown, out: Record<string, true> = {}): Record<string, true> {
  if (Array.isArray(value)) for (const item of value) flatKeys(item, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out[k] = true;
      flatKeys(v, out);
    }
  }
  return out;
}

describe('applyRefresh', () => {
  const state: ReleaseState = {
    'm:a': { ...entry('installed', 'A'), outputs: { v: 1, same: 'x' } },
    'm:b': { ...entry('installed', 'B'), outputs: { v: 1 } },
    'm:c': { ...entry('installed', 'C'), outputs: { v: 1 } },
    'm:d': { ...entry('installed', 'D'), outputs: { v: 1 } },
  };
  const rows = [
    { id: 'm:a', action: 'UnChanged' as const },
    { id: 'm:b', action: 'UnChanged' as const },
    { id: 'm:c', action: 'Update' as const },
    { id: 'm:d', action: 'UnChanged' as const },
  ];

  it('makes Drifted the unchanged kapps whose live outputs differ, Unknown those that could not be read', () => {
    const refreshed = applyRefresh(
      rows,
      state,
      new Map<string, RefreshResult>([
        ['m:a', { outputs: { v: 2, same: 'x' } }],
        ['m:b', { error: 'outputs not read: boom' }],
        ['m:c', { outputs: { v: 9 } }],
        ['m:d', { outputs: { v: 1 } }],
      ]),
    );
    expect(refreshed).toEqual([
      { id: 'm:a', action: 'Drifted', drift: [{ path: ['outputs', 'v'], from: 1, to: 2 }] },
      { id: 'm:b', action: 'Unknown', reason: 'outputs not read: boom' },
      { id: 'm:c', action: 'Update' },
      { id: 'm:d', action: 'UnChanged' },
    ]);
    const doc = previewDocument('dev', 'shop', 1, refreshed, undefined, ['m:a', 'm:b', 'm:d']);
    expect(doc.hasChanges).toBe(true);
    expect(doc.refreshed).toEqual(['m:a', 'm:b', 'm:d']);
    expect(doc.kapps[1]).toMatchObject({ action: 'Unknown', reason: 'outputs not read: boom', drift: [] });
    expect(previewDocument('dev', 'shop', 1, [rows[3] ?? rows[0]!]).hasChanges).toBe(false);
  });
});
