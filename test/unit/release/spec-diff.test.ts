import { describe, expect, it } from 'vitest';
import type { SpecKapp, SpecStep } from '../../../src/plan/spec.js';
import {
  SENSITIVE,
  SENSITIVE_CHANGED,
  diffKappSpecs,
  diffOutputValues,
  formatChange,
  redactKappSpec,
  redactPlannedKapp,
} from '../../../src/release/spec-diff.js';

function step(name: string, over: Partial<SpecStep> = {}): SpecStep {
  return { name, command: 'helm', args: [], env: {}, workingDir: '/w', ...over };
}

function kapp(steps: SpecStep[], over: Partial<SpecKapp> = {}): SpecKapp {
  return {
    id: 'web:api',
    dependsOn: [],
    selected: true,
    conditionsOk: true,
    phases: { plan_install: [], apply_install: steps, plan_delete: [], apply_delete: [], output: [], clean: [] },
    ...over,
  };
}

describe('diffKappSpecs', () => {
  it('lists a step reordered, its fields changed, and nothing for equal specs', () => {
    const a = kapp([step('a'), step('b', { timeout: 10, expectedExitCode: 0, conditions: ['true'] })]);
    const b = kapp([
      step('b', { timeout: 20, expectedExitCode: 3, conditions: ['false'], workingDir: '/x' }),
      step('a'),
    ]);
    expect(diffKappSpecs(a, a)).toEqual([]);
    const changes = diffKappSpecs(a, b);
    expect(changes.map(formatChange)).toEqual([
      '~ apply_install order: a, b → b, a',
      '~ apply_install/b workingDir: "/w" → "/x"',
      '~ apply_install/b timeout: 10 → 20',
      '~ apply_install/b expectedExitCode: 0 → 3',
      '~ apply_install/b conditions: ["true"] → ["false"]',
    ]);
  });

  it('tells repeated step names apart', () => {
    const a = kapp([step('x', { args: ['1'] }), step('x', { args: ['2'] })]);
    const b = kapp([step('x', { args: ['1'] }), step('x', { args: ['3'] })]);
    expect(diffKappSpecs(a, b)).toEqual([{ path: ['apply_install', 'x#2', 'args'], from: ['2'], to: ['3'] }]);
  });

  it('keeps every step when a name is also the key of a repeat (`a`, `a#2` and `a` again, from two run units)', () => {
    const a = kapp([step('a', { args: ['one'] }), step('a#2', { args: ['three'] }), step('a', { args: ['two'] })]);
    const b = kapp([step('a', { args: ['one'] }), step('a#2', { args: ['four'] }), step('a', { args: ['two'] })]);
    expect(diffKappSpecs(a, b)).toEqual([{ path: ['apply_install', 'a#2', 'args'], from: ['three'], to: ['four'] }]);
    for (const shown of [redactKappSpec(b, a), redactKappSpec(b), redactPlannedKapp(b)]) {
      expect(shown.phases.apply_install.map((s) => s.args)).toEqual([['one'], ['four'], ['two']]);
    }
  });

  it('masks secret env values, secret options and URL passwords, marking the changed ones', () => {
    const a = kapp([
      step('s', {
        args: ['--token', 'tok-old', '--set', 'db.password=pw-old', 'https://u:url-old@h/x', '--name', 'n'],
        env: { API_KEY: 'key-same', DB_PASSWORD: 'pw-old', MODE: 'a' },
      }),
    ]);
    const b = kapp([
      step('s', {
        args: ['--token', 'tok-new', '--set', 'db.password=pw-old', 'https://u:url-new@h/x', '--name', 'm'],
        env: { API_KEY: 'key-same', DB_PASSWORD: 'pw-new', MODE: 'a' },
      }),
    ]);
    const changes = diffKappSpecs(a, b);
    expect(changes).toEqual([
      {
        path: ['apply_install', 's', 'args'],
        from: ['--token', SENSITIVE, '--set', `db.password=${SENSITIVE}`, `https://u:${SENSITIVE}@h/x`, '--name', 'n'],
        to: [
          '--token',
          SENSITIVE_CHANGED,
          '--set',
          `db.password=${SENSITIVE}`,
          `https://u:${SENSITIVE_CHANGED}@h/x`,
          '--name',
          'm',
        ],
      },
      { path: ['apply_install', 's', 'env', 'DB_PASSWORD'], from: SENSITIVE, to: SENSITIVE_CHANGED },
    ]);
    const text = JSON.stringify([changes, redactKappSpec(a), redactKappSpec(b, a)]);
    for (const secret of ['tok-', 'pw-', 'url-', 'key-same']) expect(text).not.toContain(secret);
    expect(redactKappSpec(b, a).phases.apply_install[0]?.env).toEqual({
      API_KEY: SENSITIVE,
      DB_PASSWORD: SENSITIVE_CHANGED,
      MODE: 'a',
    });
  });

  it('masks a planned kapp as a recorded one, but shows its text as written (a planned spec holds no keyed mask)', () => {
    const planned = kapp([
      step('s', { args: ['--token', 'tok-1', 'note (sensitive#0123abcd)'], env: { DB_PASSWORD: 'pw-1', MODE: 'a' } }),
    ]);
    const shown = redactPlannedKapp(planned);
    expect(shown.phases.apply_install[0]?.args).toEqual(['--token', SENSITIVE, 'note (sensitive#0123abcd)']);
    expect(shown.phases.apply_install[0]?.env).toEqual({ DB_PASSWORD: SENSITIVE, MODE: 'a' });
    // A recorded spec's keyed masks are shown as `(sensitive)`.
    expect(redactKappSpec(planned).phases.apply_install[0]?.args[2]).toBe(`note ${SENSITIVE}`);
    expect(planned.phases.apply_install[0]?.env.DB_PASSWORD).toBe('pw-1');
    expect(planned.phases.apply_install[0]?.args[1]).toBe('tok-1');
  });

  it('does not report a secret as changed when the old side holds only a mask', () => {
    const a = kapp([step('s', { env: { TOKEN: '<sensitive>' } })]);
    const b = kapp([step('s', { env: { TOKEN: 'real-token' } })]);
    expect(diffKappSpecs(a, b)).toEqual([]);
  });

  it('lists every step of a kapp created from nothing, and the dependencies', () => {
    const b = kapp([step('install', { args: ['--password=pw'] })], { dependsOn: ['web:db'] });
    expect(diffKappSpecs(null, b).map(formatChange)).toEqual([
      '+ dependsOn: (none) → ["web:db"]',
      `+ apply_install/install: helm --password=${SENSITIVE}`,
    ]);
  });
});

describe('diffOutputValues', () => {
  it('lists changed output ids with values masked where a run redacted them', () => {
    expect(
      diffOutputValues({ a: 1, s: 'x <sensitive> y', same: true }, { a: 2, s: 'z <sensitive>', same: true }),
    ).toEqual([
      { path: ['outputs', 'a'], from: 1, to: 2 },
      { path: ['outputs', 's'], from: SENSITIVE, to: SENSITIVE_CHANGED },
    ]);
  });
});
