import { describe, expect, it } from 'vitest';
import { error, warning } from '../../../src/diagnostics/diagnostic.js';
import { toJS, fromJS, type GoMap } from '../../../src/go-value/value.js';
import { uniqueDiagnostics } from '../../../src/stack/unique-diagnostics.js';
import { descriptorData } from '../../../src/stack/vars-report.js';

describe('uniqueDiagnostics', () => {
  it('drops repeats of the same severity, place and message, keeping the first order', () => {
    const at = { file: 'a.yaml', line: 2, column: 3 };
    const list = [error('x', at), warning('x', at), error('y', at), error('x', { ...at }), error('x'), error('x')];
    expect(uniqueDiagnostics(list).map((d) => `${d.severity} ${d.message} ${d.location ? 'at' : '-'}`)).toEqual([
      'error x at',
      'warning x at',
      'error y at',
      'error x -',
    ]);
  });
});

describe('descriptorData', () => {
  it('shows a descriptor as users write it, in a fixed field order', () => {
    const data = descriptorData({
      vars: fromJS({ a: 1 }) as GoMap,
      run_units: [{ name: 'helm', plan_install: [{ name: 'lint', command: 'helm' }] }],
      sources: [
        { id: 'chart', explicitId: false, uri: 'git@h:o/r.git//chart#v1', options: fromJS({ branch: 'v2' }) as GoMap },
      ],
      outputs: [{ id: 'url', path: 'url.txt', format: 'text' }],
      templates: [{ id: 'values', source: 'v.tpl', dest: 'v.yaml' }],
      post_install_actions: [{ id: 'cluster_update' }, { id: 'add_provider_vars_files', params: ['x.yaml'] }],
      id: 'web',
    });
    expect(Object.keys(data)).toEqual([
      'id',
      'sources',
      'outputs',
      'templates',
      'run_units',
      'post_install_actions',
      'vars',
    ]);
    expect(toJS(data)).toEqual({
      id: 'web',
      sources: { chart: { uri: 'git@h:o/r.git//chart#v1', options: { branch: 'v2' } } },
      outputs: { url: { path: 'url.txt', format: 'text' } },
      templates: { values: { source: 'v.tpl', dest: 'v.yaml' } },
      run_units: { helm: { plan_install: [{ name: 'lint', command: 'helm' }] } },
      post_install_actions: [{ cluster_update: null }, { add_provider_vars_files: { params: ['x.yaml'] } }],
      vars: { a: 1 },
    });
  });
});
