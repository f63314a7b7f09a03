/** Table rows as whitespace-split cells, keyed by the first cell; the header row is dropped. */
export function rows(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/));
}
