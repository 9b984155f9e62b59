/**
 * "Did you mean …?" suggestions for misspelt ids and names.
 */

/** Edit distance between `a` and `b`, or `limit + 1` as soon as it must exceed `limit` (keeps big searches cheap). */
export function editDistance(a: string, b: string, limit = Number.MAX_SAFE_INTEGER): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length] ?? limit + 1;
}

/**
 * The candidate closest to `word` when it is close enough to be a likely typo (at most a third of the word's
 * length, and at least one edit, away); the first candidate wins ties, so pass candidates in a stable order.
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const distance = editDistance(word, candidate, bestDistance - 1);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `did you mean 'x'?` for the closest candidate, or undefined when none is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const match = closestMatch(word, candidates);
  return match === undefined ? undefined : `did you mean '${match}'?`;
}
