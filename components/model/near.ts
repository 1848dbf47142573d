/** How near a misspelt key is to the ones that exist: for "did you mean" at every level of a config. */

/** Edits needed to turn `a` into `b` (insert, delete, substitute, swap two neighbours). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      let best = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** The known key closest to `key` (case-insensitive, within a third of its length), or undefined. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const k of known) {
    const distance = editDistance(lower, k.toLowerCase());
    if (
      distance <= Math.max(1, Math.floor(k.length / 3)) &&
      (best === undefined || distance < best.distance)
    ) {
      best = { key: k, distance };
    }
  }
  return best?.key;
}
