/**
 * "Did you mean" suggestions for misspelt field names.
 */

/** Levenshtein distance between two strings (insertions, deletions and substitutions each cost 1). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/**
 * The candidate closest to `word` within edit distance `maxDistance` (case-insensitively), or undefined. Ties go to
 * the earlier candidate.
 */
export function closestMatch(word: string, candidates: Iterable<string>, maxDistance = 2): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const c of candidates) {
    if (c === word) continue;
    const d = editDistance(lower, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}
