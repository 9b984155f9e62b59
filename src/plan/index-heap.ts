/**
 * A binary min-heap of non-negative integers: the ready queue of the topological order (`topo-order.ts`) and of the
 * walker (`execute/walk.ts`), where the integer is a node's position in stack order, so `pop` always yields the earliest
 * ready node. O(log n) per push and pop.
 */
export class IndexHeap {
  readonly #items: number[] = [];

  /** Number of queued integers. */
  get size(): number {
    return this.#items.length;
  }

  /** Queues `value`. */
  push(value: number): void {
    const items = this.#items;
    let i = items.push(value) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = items[parent] as number;
      if (above <= value) break;
      items[i] = above;
      i = parent;
    }
    items[i] = value;
  }

  /** Removes and returns the smallest queued integer, or undefined when empty. */
  pop(): number | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && (items[right] as number) < (items[left] as number) ? right : left;
      const smaller = items[child] as number;
      if (smaller >= last) break;
      items[i] = smaller;
      i = child;
    }
    items[i] = last;
    return top;
  }
}
