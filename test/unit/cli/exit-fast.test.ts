import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { endAtExit, type ExitingProcess } from '../../../src/cli/exit-fast.js';

/** A process of its own: `exit` listeners, an exit code, and the codes `reallyExit` was called with. */
function fakeProcess(): ExitingProcess & { ended: number[]; emitExit(code: number): void } {
  const events = new EventEmitter();
  const ended: number[] = [];
  const proc = {
    ended,
    exitCode: undefined as number | undefined,
    on: (event: 'exit', listener: (code: number) => void) => events.on(event, listener),
    listeners: (event: 'exit') => events.listeners(event),
    reallyExit: (code: number) => void ended.push(code),
    emitExit: (code: number) => void events.emit('exit', code),
  };
  return proc;
}

describe('endAtExit', () => {
  it('ends the process with the exit code once the last exit listener has run', () => {
    const proc = fakeProcess();
    const seen: string[] = [];
    proc.on('exit', () => void seen.push('earlier listener'));
    endAtExit(proc);
    proc.emitExit(3);
    expect(seen).toEqual(['earlier listener']);
    expect(proc.ended).toEqual([3]);
  });

  it('uses the code an earlier listener set, as Node does', () => {
    const proc = fakeProcess();
    proc.on('exit', () => {
      proc.exitCode = 5;
    });
    endAtExit(proc);
    proc.emitExit(0);
    expect(proc.ended).toEqual([5]);
  });

  it('leaves the ending to Node when a listener was added after it', () => {
    const proc = fakeProcess();
    endAtExit(proc);
    const seen: string[] = [];
    proc.on('exit', () => void seen.push('later listener'));
    proc.emitExit(1);
    expect(seen).toEqual(['later listener']);
    expect(proc.ended).toEqual([]);
  });
});
