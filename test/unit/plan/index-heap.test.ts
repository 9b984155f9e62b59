import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IndexHeap } from '../../../src/plan/index-heap.js';

describe('IndexHeap', () => {
  it('pops the smallest value first, whatever the order of pushes and pops', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(1000), fc.constant(-1)), { maxLength: 200 }), (ops) => {
        const heap = new IndexHeap();
        const model: number[] = [];
        for (const op of ops) {
          if (op === -1) {
            model.sort((a, b) => a - b);
            expect(heap.pop()).toBe(model.shift());
          } else {
            heap.push(op);
            model.push(op);
          }
          expect(heap.size).toBe(model.length);
        }
      }),
    );
  });

  it('returns undefined when empty', () => {
    expect(new IndexHeap().pop()).toBeUndefined();
  });
});
