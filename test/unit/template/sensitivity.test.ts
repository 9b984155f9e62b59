/** Sensitivity carried through rendering: what the run's redactor learns from templates that use a secret. */
import { afterEach, describe, expect, it } from 'vitest';
import { Redactor } from '../../../src/execute/redact.js';
import { renderTemplate } from '../../../src/template/index.js';
import { watchSensitivity } from '../../../src/template/sensitivity.js';
import { newGoMap, type GoMap } from '../../../src/go-value/value.js';

const SECRET = 'hunter2-token-value';

function setup(): { redactor: Redactor; data: GoMap } {
  const redactor = new Redactor();
  const creds = newGoMap();
  creds.token = SECRET;
  creds.num = 1234567.5;
  creds.plain = 'ordinary-value';
  redactor.add(SECRET);
  redactor.add(1234567.5);
  const data = newGoMap();
  data.creds = creds;
  data.name = 'cluster-one';
  unwatch = watchSensitivity(redactor);
  return { redactor, data };
}

let unwatch: (() => void) | undefined;
afterEach(() => {
  unwatch?.();
  unwatch = undefined;
});

describe('sensitivity through rendering', () => {
  it.each([
    ['{{ .creds.token | upper }}', SECRET.toUpperCase()],
    ['{{ b64enc .creds.token }}', Buffer.from(SECRET).toString('base64')],
    ['{{ printf "%v" .creds.num }}', '1.2345675e+06'],
    ['{{ .creds.num }}', '1.2345675e+06'],
    ['{{ trunc 9 .creds.token }}', SECRET.slice(0, 9)],
    ['{{ $x := .creds.token | upper }}{{ $x | lower | b64enc }}', Buffer.from(SECRET).toString('base64')],
    ['{{ with .creds.token }}{{ . | title }}{{ end }}', 'Hunter2-Token-Value'],
    ['{{ .creds | toJson }}', '{"num":1234567.5,"plain":"ordinary-value","token":"hunter2-token-value"}'],
  ])('%s is redacted', (template, printed) => {
    const { redactor, data } = setup();
    expect(renderTemplate(template, data)).toBe(printed);
    expect(redactor.text(`x ${printed} y`)).toBe('x <sensitive> y');
  });

  it('leaves values that do not come from a secret alone, selections from a map holding one included', () => {
    const { redactor, data } = setup();
    expect(renderTemplate('{{ .name | upper }} {{ index .creds "plain" | upper }} {{ .creds.plain }}', data)).toBe(
      'CLUSTER-ONE ORDINARY-VALUE ordinary-value',
    );
    expect(redactor.text('CLUSTER-ONE ORDINARY-VALUE ordinary-value')).toBe(
      'CLUSTER-ONE ORDINARY-VALUE ordinary-value',
    );
  });

  it('learns nothing when no run watches', () => {
    const { redactor, data } = setup();
    unwatch?.();
    unwatch = undefined;
    expect(renderTemplate('{{ .creds.token | upper }}', data)).toBe(SECRET.toUpperCase());
    expect(redactor.text(SECRET.toUpperCase())).toBe(SECRET.toUpperCase());
  });
});
