/**
 * Finding dependency cycles to report. Linear (an iterative Tarjan, so deep chains cannot overflow the stack),
 * and deterministic: one cycle per strongly connected component, the shortest one through its smallest id,
 * following the smallest ids first.
 */

/** Strongly connected components of the graph `next` describes over `ids`, with more than one node each. */
function components(ids: readonly string[], next: (id: string) => readonly string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;
  interface Frame {
    readonly id: string;
    readonly neighbours: readonly string[];
    at: number;
  }
  const work: Frame[] = [];
  const open = (id: string): void => {
    index.set(id, counter);
    low.set(id, counter);
    counter++;
    stack.push(id);
    onStack.add(id);
    work.push({ id, neighbours: next(id), at: 0 });
  };
  for (const root of ids) {
    if (index.has(root)) continue;
    open(root);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      if (!frame) break;
      const w = frame.neighbours[frame.at];
      if (w !== undefined) {
        frame.at++;
        if (!index.has(w)) open(w);
        else if (onStack.has(w)) low.set(frame.id, Math.min(low.get(frame.id) ?? 0, index.get(w) ?? 0));
        continue;
      }
      work.pop();
      const caller = work[work.length - 1];
      if (caller) low.set(caller.id, Math.min(low.get(caller.id) ?? 0, low.get(frame.id) ?? 0));
      if (low.get(frame.id) === index.get(frame.id)) {
        const component: string[] = [];
        let member: string | undefined;
        do {
          member = stack.pop();
          if (member === undefined) break;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.id);
        if (component.length > 1) found.push(component);
      }
    }
  }
  return found;
}

/** The shortest cycle from `start` back to itself inside `members`, trying smaller ids first. */
function shortestCycle(start: string, members: ReadonlySet<string>, next: (id: string) => readonly string[]): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const current = queue[head] ?? start;
    for (const w of [...next(current)].filter((n) => members.has(n)).sort()) {
      if (w === start) {
        const path = [current];
        for (let p = previous.get(current); p !== undefined; p = previous.get(p)) path.push(p);
        return path.reverse();
      }
      if (!previous.has(w) && w !== start) {
        previous.set(w, current);
        queue.push(w);
      }
    }
  }
  return [start];
}

/**
 * One cycle per group of mutually dependent ids, each as `[a, b, …]` meaning a → b → … → a along `next`,
 * starting at the group's smallest id; cycles sorted by that id. Self-loops are not reported here.
 */
export function findCycles(ids: readonly string[], next: (id: string) => readonly string[]): string[][] {
  return components(ids, next)
    .map((component) => {
      const start = [...component].sort()[0] ?? '';
      return shortestCycle(start, new Set(component), next);
    })
    .sort((a, b) => ((a[0] ?? '') < (b[0] ?? '') ? -1 : (a[0] ?? '') > (b[0] ?? '') ? 1 : 0));
}
