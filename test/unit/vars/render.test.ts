import { describe, expect, it } from 'vitest';
import { locationOf, setLocation } from '../../../src/config/locations.js';
import { ConfigError } from '../../../src/diagnostics/errors.js';
import { fromJS, GoIfaceMap, type GoMap } from '../../../src/go-value/value.js';
import { containsTemplate, MAX_PASSES, renderOnce, renderVariables } from '../../../src/vars/render.js';

const m = (v: unknown): GoMap => fromJS(v) as GoMap;
const ctx = { subject: "kapp 'm:k'" };

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.diagnostics.map((d) => d.message).join('\n');
    throw e;
  }
  throw new Error('expected a ConfigError');
}

describe('renderVariables', () => {
  it('renders chains to a fixed point and keeps non-string values typed', () => {
    const out = renderVariables(m({ a: '{{ .b }}', b: '{{ .c }}', c: 'hello', n: 3, list: ['{{ .c }}', 1] }), ctx);
    expect(out).toEqual(m({ a: 'hello', b: 'hello', c: 'hello', n: 3, list: ['hello', 1] }));
    expect(typeof out.n).toBe('bigint');
  });

  it('does not modify its input and shares the parts without templates', () => {
    const shared = m({ x: { y: 'plain' } });
    const input = m({ t: { v: '{{ .fixed.x.y }}' } });
    input.fixed = shared;
    const out = renderVariables(input, ctx);
    expect(out.fixed).toBe(shared);
    expect(input.t).toEqual(m({ v: '{{ .fixed.x.y }}' }));
    expect(out.t).toEqual(m({ v: 'plain' }));
    expect(out).not.toBe(input);
  });

  it('never renders outputs', () => {
    const out = renderVariables(m({ outputs: { x: '{{ .a }}' }, a: 'b' }), ctx);
    expect(out.outputs).toEqual(m({ x: '{{ .a }}' }));
  });

  it('names a variable (or the variables) that never stop changing', () => {
    expect(messageOf(() => renderVariables(m({ a: '{{ .a }}x' }), ctx))).toBe(
      `kapp 'm:k': variable a still changes after ${MAX_PASSES} rendering passes: it refers to itself, directly or through other variables`,
    );
    expect(
      messageOf(() => renderVariables(m({ v: { a: '{{ .v.b }}x', b: '{{ .v.a }}y' }, c: '{{ .c }}z' }), ctx)),
    ).toBe(
      `kapp 'm:k': variables v.a, v.b and c still change after ${MAX_PASSES} rendering passes: they refer to themselves, directly or through other variables`,
    );
  });

  it('reports a template error with the variable path', () => {
    expect(messageOf(() => renderVariables(m({ a: { b: '{{ nosuch }}' } }), ctx))).toContain(
      "kapp 'm:k': cannot render variable a.b: ",
    );
  });
});

describe('renderOnce', () => {
  it('returns the value itself when nothing in it is a template', () => {
    const value = { a: ['x', { b: 'y' }], n: 1 };
    expect(renderOnce(value, m({}), ctx)).toBe(value);
  });

  it('copies only the objects and lists in which something rendered, with their locations', () => {
    const untouched = { c: 'plain' };
    const list = ['{{ .v }}', 'keep'];
    setLocation(list, { file: 'f.yaml', line: 3, column: 5 }, 0);
    const value = { list, untouched };
    const out = renderOnce(value, m({ v: 'rendered' }), ctx);
    expect(out).toEqual({ list: ['rendered', 'keep'], untouched: { c: 'plain' } });
    expect(out.untouched).toBe(untouched);
    expect(out.list).not.toBe(list);
    expect(locationOf(out.list, 0)).toEqual({ file: 'f.yaml', line: 3, column: 5 });
    expect(value.list[0]).toBe('{{ .v }}');
  });
});

describe('containsTemplate', () => {
  it('finds template strings anywhere, including in values JSON cannot hold', () => {
    expect(containsTemplate('a {{ .b }}')).toBe(true);
    expect(containsTemplate({ a: [{ b: 'x' }] })).toBe(false);
    expect(containsTemplate({ a: [{ b: 'x {{ .y }}' }] })).toBe(true);
    expect(containsTemplate(m({ n: 5, s: '{{ .x }}' }))).toBe(true);
    expect(containsTemplate(m({ n: 5, s: 'x' }))).toBe(false);
    // Iface maps hold data, not templates.
    expect(containsTemplate({ i: new GoIfaceMap([[1n, '{{ .x }}']]) })).toBe(false);
  });
});

describe('plan mode', () => {
  const data = m({ outputs: { db: { token: {} } }, s: 'x' });

  it('renders <no value> for a template that fails on an output placeholder, only when planning', () => {
    expect(renderOnce('{{ .outputs.db.token | trim }}', data, { ...ctx, planOnly: true })).toBe('<no value>');
    expect(messageOf(() => renderOnce('{{ .outputs.db.token | trim }}', data, ctx))).toContain(
      "kapp 'm:k': cannot render value",
    );
    expect(
      renderVariables(m({ outputs: data.outputs, v: '{{ .outputs.db.token | upper }}' }), { ...ctx, planOnly: true }).v,
    ).toBe('<no value>');
  });

  it('still fails for templates that do not read outputs', () => {
    expect(messageOf(() => renderOnce('{{ .s | nosuch }}', data, { ...ctx, planOnly: true }))).toContain('nosuch');
  });
});
