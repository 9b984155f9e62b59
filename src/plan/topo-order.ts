/**
 * A deterministic topological order: parents before children, and among the nodes ready at the same time the one
 * that comes first in the given order (stack order) first. Kahn's algorithm with a binary heap of positions, so
 * O((n + e) log n) and no recursion.
 */

import { IndexHeap } from './index-heap.js';

/**
 * `ids` reordered so that every id comes after its parents (parents outside `ids` are ignored), ties broken by
 * position in `ids`. Ids caught in a cycle (which a validated DAG never has) are appended in their given order.
 */
export function topologicalOrder(ids: readonly string[], parentsOf: (id: string) => readonly string[]): string[] {
  const position = new Map<string, number>();
  ids.forEach((id, i) => position.set(id, i));
  const pending = ids.map(() => 0);
  const children: number[][] = ids.map(() => []);
  ids.forEach((id, i) => {
    for (const parent of new Set(parentsOf(id))) {
      const p = position.get(parent);
      if (p === undefined) continue;
      pending[i] = (pending[i] ?? 0) + 1;
      children[p]?.push(i);
    }
  });
  const ready = new IndexHeap();
  pending.forEach((count, i) => {
    if (count === 0) ready.push(i);
  });
  const order: string[] = [];
  const done = ids.map(() => false);
  while (ready.size > 0) {
    const i = ready.pop() ?? 0;
    done[i] = true;
    order.push(ids[i] ?? '');
    for (const child of children[i] ?? []) {
      const left = (pending[child] ?? 0) - 1;
      pending[child] = left;
      if (left === 0) ready.push(child);
    }
  }
  ids.forEach((id, i) => {
    if (!done[i]) order.push(id);
  });
  return order;
}
