import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/diagnostics/errors.js';
import { evaluateConditions, parseGoBool, type ConditionSite } from '../../../src/plan/go-bool.js';
import { formatDiagnostics } from '../../../src/report/diagnostic-printer.js';

const site: ConditionSite = { kapp: 'web:nginx', owner: "output 'kubeconfig'" };

function printed(conds: string[], where: ConditionSite, source?: Record<string, string>): string {
  try {
    evaluateConditions(conds, where);
  } catch (e) {
    if (e instanceof ConfigError)
      return formatDiagnostics(e.diagnostics, { cwd: '/p', readSource: (f) => source?.[f] });
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('parseGoBool', () => {
  it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('%j is true', (text) => {
    expect(parseGoBool(text)).toBe(true);
  });
  it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('%j is false', (text) => {
    expect(parseGoBool(text)).toBe(false);
  });
  it.each(['', ' true', 'true ', 'yes', 'no', 'on', 'off', 'tRUE', 'TrUe', '<no value>', '2', 'y', 'n'])(
    '%j is not a Go boolean',
    (text) => {
      expect(parseGoBool(text)).toBeUndefined();
    },
  );
});

describe('evaluateConditions', () => {
  it.each<[string[], boolean]>([
    [[], true],
    [['true', 'true'], true],
    [['true', 'true', '1'], true],
    [['true', 'false'], false],
    [['true', 'false', 'true'], false],
  ])('TestAll: %j → %s', (conds, expected) => {
    expect(evaluateConditions(conds, site)).toBe(expected);
  });

  it('rejects text that is not a Go boolean, even after a false condition', () => {
    expect(printed(['false', 'yes'], site)).toBe(
      [
        "error: the 2nd condition of output 'kubeconfig' of kapp 'web:nginx' is not true or false: it rendered as \"yes\"",
        '  hint: a condition must render to exactly one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False',
      ].join('\n'),
    );
  });

  it("names the kapp alone for a kapp's own conditions and points at the condition", () => {
    const file = '/p/manifests/web.yaml';
    const where: ConditionSite = {
      kapp: 'web:nginx',
      conditionLocations: [undefined, { file, line: 5, column: 9, endLine: 5, endColumn: 19 }],
      location: { file, line: 3, column: 5 },
    };
    const source = { [file]: 'kapps:\n  - id: nginx\n    conditions:\n      - "true"\n      - <no value>\n' };
    expect(printed(['true', '<no value>', ''], where, source)).toBe(
      [
        'manifests/web.yaml:5:9: error: the 2nd condition of kapp \'web:nginx\' is not true or false: it rendered as "<no value>"',
        '  |',
        '5 |       - <no value>',
        '  |         ^^^^^^^^^^',
        '  hint: a condition must render to exactly one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False',
        '',
        'manifests/web.yaml:3:5: error: the 3rd condition of kapp \'web:nginx\' is not true or false: it rendered as ""',
        '  |',
        '3 |     conditions:',
        '  |     ^^^^^^^^^^^',
        '  hint: a condition must render to exactly one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False',
      ].join('\n'),
    );
  });

  it('uses English ordinals', () => {
    const conds = Array.from({ length: 23 }, () => 'x');
    const text = printed(conds, site);
    for (const ord of ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd']) {
      expect(text).toContain(`the ${ord} condition`);
    }
  });
});
