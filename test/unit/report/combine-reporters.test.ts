import { describe, expect, it } from 'vitest';
import { combineReporters } from '../../../src/report/combine-reporters.js';
import type { Reporter, RunEvent } from '../../../src/report/events.js';
import { ev } from './support.js';

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

describe('combineReporters', () => {
  it('passes each event to every reporter in order, and closes them all', async () => {
    const log: string[] = [];
    const both = combineReporters([recorder('a', log), recorder('b', log)]);
    both.onEvent(ev.runStarted(['m:k']));
    both.onEvent(ev.runFinished(1, 'succeeded'));
    await both.close();
    expect(log).toEqual(['a:run-started', 'b:run-started', 'a:run-finished', 'b:run-finished', 'a:close', 'b:close']);
  });

  it('still feeds and closes the others when one reporter throws, then reports the error', async () => {
    const log: string[] = [];
    const both = combineReporters([
      recorder('a', log, { throwOn: 'run-started', failClose: true }),
      recorder('b', log),
    ]);
    expect(() => both.onEvent(ev.runStarted(['m:k']))).toThrow('a broke');
    await expect(both.close()).rejects.toThrow('a close failed');
    expect(log).toEqual(['a:run-started', 'b:run-started', 'a:close', 'b:close']);
  });
});
