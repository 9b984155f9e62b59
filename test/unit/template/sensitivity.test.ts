/** Sensitivity carried through rendering: what the run's redactor learns from templates that use a secret. */
import { describe, expect, it } from 'vitest';
import { Redactor } from '../../../src/execute/redact.js';
import { processEnvContext, renderTemplate, withRenderContext } from '../../../src/template/index.js';
import { newGoMap, type GoMap } from '../../../src/go-value/value.js';

const SECRET = 'hunter2-token-value';

function setup(): { redactor: Redactor; data: GoMap; render: (template: string) => string } {
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
  const render = (template: string): string =>
    withRenderContext({ ...processEnvContext, watch: redactor }, () => renderTemplate(template, data));
  return { redactor, data, render };
}

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
    const { redactor, render } = setup();
    expect(render(template)).toBe(printed);
    expect(redactor.text(`x ${printed} y`)).toBe('x <sensitive> y');
  });

  it('leaves values that do not come from a secret alone, selections from a map holding one included', () => {
    const { redactor, render } = setup();
    expect(render('{{ .name | upper }} {{ index .creds "plain" | upper }} {{ .creds.plain }}')).toBe(
      'CLUSTER-ONE ORDINARY-VALUE ordinary-value',
    );
    expect(redactor.text('CLUSTER-ONE ORDINARY-VALUE ordinary-value')).toBe(
      'CLUSTER-ONE ORDINARY-VALUE ordinary-value',
    );
  });

  it('learns nothing when no run watches', () => {
    const { redactor, data } = setup();
    expect(renderTemplate('{{ .creds.token | upper }}', data)).toBe(SECRET.toUpperCase());
    expect(redactor.text(SECRET.toUpperCase())).toBe(SECRET.toUpperCase());
  });

  it('keeps each run its own watch: one run ending leaves the other watched', async () => {
    const a = setup();
    const b = new Redactor();
    const other = 'other-run-secret-value';
    b.add(other);
    const data = newGoMap();
    data.s = other;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Run b renders after run a has finished; its render is still watched by b alone.
    const runB = withRenderContext({ ...processEnvContext, watch: b }, async () => {
      await gate;
      return renderTemplate('{{ .s | upper }}', data);
    });
    expect(a.render('{{ .creds.token | upper }}')).toBe(SECRET.toUpperCase());
    release();
    expect(await runB).toBe(other.toUpperCase());
    expect(b.text(other.toUpperCase())).toBe('<sensitive>');
    expect(a.redactor.text(other.toUpperCase())).toBe(other.toUpperCase());
    expect(b.text(SECRET.toUpperCase())).toBe(SECRET.toUpperCase());
  });
});
