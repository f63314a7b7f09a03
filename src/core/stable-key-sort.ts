/**
 * Sorts `order` in place by `keyOf` ascending, keeping the order of equal keys, as
 * `order.sort((a, b) => keyOf(a) - keyOf(b))` does (keys numbers or +-Infinity, never NaN; 0 and -0
 * equal). The waiting jobs' expected work left takes few values (a job not yet started has its class
 * and epoch's), and a comparison sort of 14,000 waiting jobs cost about 3 ms a decision at 20,000 jobs
 * (bench:tick): grouped by key, the groups in ascending order, it is two passes. With many distinct
 * keys it is the comparison sort.
 */
export function sortByKeyStable(order: Int32Array, keyOf: (index: number) => number): void {
  const count = order.length;
  const keys = new Float64Array(count);
  // Each key's count, then where its group starts.
  const groups = new Map<number, number>();
  for (let position = 0; position < count; position++) {
    const key = keyOf(order[position] as number);
    keys[position] = key;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  if (groups.size * 8 > count) {
    order.sort((a, b) => keyOf(a) - keyOf(b));
    return;
  }
  let start = 0;
  for (const key of [...groups.keys()].sort((a, b) => a - b)) {
    const size = groups.get(key) as number;
    groups.set(key, start);
    start += size;
  }
  const unsorted = order.slice();
  for (let position = 0; position < count; position++) {
    const key = keys[position] as number;
    const at = groups.get(key) as number;
    groups.set(key, at + 1);
    order[at] = unsorted[position] as number;
  }
}
