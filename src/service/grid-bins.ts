/**
 * Arrival bins on a fixed grid: edges at whole multiples of the bin length (since the epoch), so an
 * arrival stays in one bin as time passes. Bins counted back from `now` moved their edges every
 * minute: a burst read as one bin's worth (burst-capped) at some minutes and as two bins' at others,
 * and the planned rates flipped up to 7x on a 5-minute cycle for hours after one burst (found in
 * review). The first and last bins are the partial ones at the window's ends.
 */

/** [from, the grid's multiples of `binMs` strictly between, to]; bin i is (edges[i], edges[i + 1]]. */
export function gridEdges(from: number, to: number, binMs: number): number[] {
  const edges = [from];
  for (let edge = (Math.floor(from / binMs) + 1) * binMs; edge < to; edge += binMs) edges.push(edge);
  edges.push(Math.max(from, to));
  return edges;
}

/** Each bin's length in hours. */
export function binHoursOf(edges: readonly number[]): number[] {
  return edges.slice(1).map((edge, i) => (edge - (edges[i] as number)) / 3_600_000);
}

/** The bin of a time in (edges[0], edges[last]]: the first i with t <= edges[i + 1]; -1 when outside. */
export function binOf(edges: readonly number[], t: number): number {
  if (!(t > (edges[0] as number)) || t > (edges[edges.length - 1] as number)) return -1;
  let lo = 1;
  let hi = edges.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (t <= (edges[mid] as number)) hi = mid;
    else lo = mid + 1;
  }
  return lo - 1;
}
