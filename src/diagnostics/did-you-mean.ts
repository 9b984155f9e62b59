/**
 * "Did you mean …?" suggestions for misspelt field names, ids, selectors, phases and options: one rule and one
 * wording everywhere, so every layer (config, plan, cli) suggests the same way.
 */

/**
 * Edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of two neighbouring characters each
 * cost 1), or `limit + 1` as soon as it must exceed `limit` (keeps big searches cheap).
 */
export function editDistance(a: string, b: string, limit = Number.MAX_SAFE_INTEGER): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (before[j - 2] ?? 0) + 1);
      }
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? limit + 1;
}

/**
 * The candidate closest to `word` when it is close enough to be a likely typo: case is ignored, and at most a third of
 * the word's length (and at least one) edits away. A candidate equal to `word` is never suggested; the first candidate
 * wins ties, so pass candidates in a stable order.
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const distance = editDistance(lower, candidate.toLowerCase(), bestDistance - 1);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `did you mean 'x'?` for `x`, the one wording of a suggestion. */
export function suggest(match: string): string {
  return `did you mean '${match}'?`;
}

/** `did you mean 'x'?` for the closest candidate, or undefined when none is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const match = closestMatch(word, candidates);
  return match === undefined ? undefined : suggest(match);
}
