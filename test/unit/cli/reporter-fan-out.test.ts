import { describe, expect, it } from 'vitest';
import { closeAll, fanOut } from '../../../src/cli/reporter-fan-out.js';
import type { Reporter, RunEvent } from '../../../src/report/events.js';
import { ev } from '../report/support.js';

function recorder(name: string, log: string[], options: { throwOn?: RunEvent['type']; failClose?: boolean } = {}) {
  const reporter: Reporter = {
    onEvent(event) {
      log.push(`${name}:${event.type}`);
      if (event.type === options.throwOn) throw new Error(`${name} broke`);
    },
    close() {
      log.push(`${name}:close`);
      return options.failClose === true ? Promise.reject(new Error(`${name} close failed`)) : Promise.resolve();
    },
  };
  return reporter;
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

describe('reporter fan-out', () => {
  it('passes each event to every reporter in order, and closes them all', async () => {
    const log: string[] = [];
    const failures: string[] = [];
    const reporters = [recorder('a', log), recorder('b', log)];
    fanOut(reporters, ev.runStarted(['m:k']), (e) => failures.push(message(e)));
    fanOut(reporters, ev.runFinished(1, 'succeeded'), (e) => failures.push(message(e)));
    await closeAll(reporters, (e) => failures.push(message(e)));
    expect(log).toEqual(['a:run-started', 'b:run-started', 'a:run-finished', 'b:run-finished', 'a:close', 'b:close']);
    expect(failures).toEqual([]);
  });

  it('still feeds the others when one reporter throws, drops it, and reports the error', () => {
    const log: string[] = [];
    const failures: string[] = [];
    const reporters = [recorder('a', log, { throwOn: 'run-started' }), recorder('b', log)];
    fanOut(reporters, ev.runStarted(['m:k']), (e) => failures.push(message(e)));
    fanOut(reporters, ev.runFinished(1, 'succeeded'), (e) => failures.push(message(e)));
    expect(log).toEqual(['a:run-started', 'b:run-started', 'b:run-finished']);
    expect(failures).toEqual(['a broke']);
    expect(reporters).toHaveLength(1);
  });

  it('still closes the others when one fails to close, and reports the error', async () => {
    const log: string[] = [];
    const failures: string[] = [];
    await closeAll([recorder('a', log, { failClose: true }), recorder('b', log)], (e) => failures.push(message(e)));
    expect(log).toEqual(['a:close', 'b:close']);
    expect(failures).toEqual(['a close failed']);
  });
});
