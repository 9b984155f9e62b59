import { describe, expect, it } from 'vitest';
import { splitLongLine } from '../../../src/log/line-cut.js';
import { LogBudget } from '../../../src/release/log-budget.js';

const line = (text: string) => ({ time: '2026-11-26T10:00:00.000Z', stream: 'stdout' as const, step: 's', text });
const stored = (text: string) => Buffer.byteLength(JSON.stringify(line(text))) + 1;

describe('log budget', () => {
  it('keeps the head as it comes, then only the tail, and says what it dropped between them', () => {
    const one = stored('line 0000');
    const budget = new LogBudget<ReturnType<typeof line>>({ maxBytes: one * 10, maxLineLength: 100 });
    const admitted: string[] = [];
    for (let i = 0; i < 100; i++) {
      const l = line(`line ${String(i).padStart(4, '0')}`);
      if (budget.admit(l)) admitted.push(l.text);
    }
    expect(admitted).toEqual(['line 0000', 'line 0001', 'line 0002', 'line 0003', 'line 0004']);
    expect(budget.tailing).toBe(true);
    expect(budget.startNotice(line('x')).text).toMatch(/^kapps: the log reached its limit/);
    const rest = budget.drain('2026-11-26T10:01:00.000Z').map((l) => l.text);
    expect(rest[0]).toMatch(/^kapps: 90 line\(s\) \([0-9.]+ KiB\) of this log were dropped here/);
    expect(rest.slice(1)).toEqual(['line 0095', 'line 0096', 'line 0097', 'line 0098', 'line 0099']);
  });

  it('holds at most half the budget for the tail, however much comes', () => {
    const budget = new LogBudget<ReturnType<typeof line>>({ maxBytes: 64 * 1024, maxLineLength: 100 });
    for (let i = 0; i < 200_000; i++) budget.admit(line(`line ${i}`));
    const tail = budget.drain('t').slice(1);
    const bytes = tail.reduce((sum, l) => sum + stored(l.text), 0);
    expect(bytes).toBeLessThanOrEqual(32 * 1024);
    expect(tail.at(-1)?.text).toBe('line 199999');
  });

  it('cuts long lines into pieces, never inside a surrogate pair', () => {
    expect(splitLongLine(line('abcdefg'), 3).map((l) => l.text)).toEqual(['abc', 'def', 'g']);
    expect(splitLongLine(line('ab😀cd'), 3).map((l) => l.text)).toEqual(['ab', '😀c', 'd']);
    expect(splitLongLine(line('short'), 10)).toHaveLength(1);
  });
});
