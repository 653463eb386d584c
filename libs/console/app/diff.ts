/** One row of a side-by-side diff: a line on the left, on the right, or the same on both. */
export type DiffRow = { kind: 'same'; left: string; right: string } | { kind: 'removed'; left: string } | { kind: 'added'; right: string };

/**
 * The lines of two texts aligned by their longest common subsequence (the server does no diffing:
 * SPEC "Diff"). Quadratic in the line count, which a definition's JSON keeps in the hundreds.
 */
export function diffLines(leftText: string, rightText: string): DiffRow[] {
  const left = leftText.split('\n');
  const right = rightText.split('\n');
  // common[i][j]: the common subsequence's length of left[i..] and right[j..].
  const common = Array.from({ length: left.length + 1 }, () => new Uint32Array(right.length + 1));
  for (let i = left.length - 1; i >= 0; i--)
    for (let j = right.length - 1; j >= 0; j--)
      common[i][j] = left[i] === right[j] ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
  const rows: DiffRow[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i < left.length && j < right.length && left[i] === right[j]) rows.push({ kind: 'same', left: left[i++], right: right[j++] });
    else if (j < right.length && (i === left.length || common[i][j + 1] >= common[i + 1][j]))
      rows.push({ kind: 'added', right: right[j++] });
    else rows.push({ kind: 'removed', left: left[i++] });
  }
  return rows;
}
