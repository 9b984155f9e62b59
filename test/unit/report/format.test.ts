import { describe, expect, it } from 'vitest';
import {
  describeStepOutcome,
  formatCommandLine,
  formatDuration,
  formatElapsed,
  formatTimeout,
  stripAnsi,
} from '../../../src/report/format.js';
import { ev } from './support.js';

describe('formatDuration', () => {
  it('shows tenths of a second below a minute, rounded down', () => {
    expect(formatDuration(0)).toBe('0.0s');
    expect(formatDuration(99)).toBe('0.0s');
    expect(formatDuration(1000)).toBe('1.0s');
    expect(formatDuration(2149)).toBe('2.1s');
    expect(formatDuration(59_999)).toBe('59.9s');
  });
  it('switches to minutes and hours', () => {
    expect(formatDuration(60_000)).toBe('1m00s');
    expect(formatDuration(65_400)).toBe('1m05s');
    expect(formatDuration(3_723_000)).toBe('1h02m03s');
  });
  it('treats negative or broken values as zero', () => {
    expect(formatDuration(-5)).toBe('0.0s');
    expect(formatDuration(Number.NaN)).toBe('0.0s');
  });
});

describe('formatElapsed and formatTimeout', () => {
  it('shows whole seconds for live displays', () => {
    expect(formatElapsed(0)).toBe('0s');
    expect(formatElapsed(12_999)).toBe('12s');
    expect(formatElapsed(125_000)).toBe('2m05s');
  });
  it('shows configured timeouts in seconds', () => {
    expect(formatTimeout(30_000)).toBe('30 s');
    expect(formatTimeout(1_500)).toBe('1.5 s');
  });
});

describe('formatCommandLine', () => {
  it('leaves plain words alone and quotes the rest with shell quoting', () => {
    expect(
      formatCommandLine('helm', [
        'upgrade',
        '--install',
        'db',
        './charts/db',
        '--set=a=b,c',
        'a b',
        "it's",
        '',
        '$HOME',
      ]),
    ).toBe(`helm upgrade --install db ./charts/db --set=a=b,c 'a b' "it's" '' \\$HOME`);
  });
  it('quotes a command word that a shell would read as an assignment', () => {
    expect(formatCommandLine('A=1', ['x'])).toBe('A\\=1 x');
  });
});

describe('describeStepOutcome', () => {
  it('names the timeout, the exit code, the reason or the signal', () => {
    const base = ev.stepFinished('m:k', 0, 's', 30_250, { status: 'failed' });
    expect(describeStepOutcome({ ...base, exitCode: null, timedOut: true, timeoutMs: 30_000 })).toBe(
      'timed out after 30 s',
    );
    expect(describeStepOutcome({ ...base, exitCode: null, timedOut: true })).toBe('timed out after 30.3 s');
    expect(describeStepOutcome({ ...base, exitCode: 2 })).toBe('exit code 2');
    expect(describeStepOutcome({ ...base, exitCode: null, reason: 'command not found: helm' })).toBe(
      'command not found: helm',
    );
    expect(describeStepOutcome({ ...base, exitCode: null, signal: 'SIGKILL' })).toBe('killed by SIGKILL');
  });
});

describe('stripAnsi', () => {
  it('removes colours and cursor movements', () => {
    expect(stripAnsi('\u001b[31mred\u001b[39m\u001b[2K\u001b[1A\u001b[G\u001b[?25l ok')).toBe('red ok');
  });
});
