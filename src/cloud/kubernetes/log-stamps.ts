/** A kubelet timestamp (RFC3339 with up to nine fraction digits) as whole seconds and nanoseconds. */
export interface Stamp {
  readonly seconds: number;
  readonly nanos: number;
}

/** A line of a log read with timestamps=true: its stamp (when it has one) and its text. */
export function parseLine(line: string): { stamp: Stamp | undefined; text: string } {
  const space = line.indexOf(' ');
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(
    line.slice(0, space),
  );
  if (space < 0 || !match) return { stamp: undefined, text: line };
  // A node whose clock is not in UTC stamps with its offset.
  const seconds = Date.parse(`${match[1]}${match[3]}`) / 1000;
  const nanos = Number((match[2] ?? '').padEnd(9, '0'));
  return { stamp: { seconds, nanos }, text: line.slice(space + 1) };
}

export function compareStamps(a: Stamp, b: Stamp): number {
  return a.seconds - b.seconds || a.nanos - b.nanos;
}

/** A whole second as sinceTime takes it (RFC3339, UTC). */
export function secondAsTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
