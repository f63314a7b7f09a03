/**
 * Each class's allocated GPU-milliseconds over a span, with whole past hours kept in memory: summed from
 * the samples' JSON (json_each) a 24-hour window at 1 s ticks is 86,400 samples, about 160 ms of blocking
 * work per GET /v1/budget; with the hours kept, a query reads only its edges' samples. An hour is kept
 * once the samples cover it (it ends at or before the allocation cursor): a later sample starts at the
 * cursor or after, so a kept hour never changes.
 */
const HOUR = 3_600_000;

export type ClassGpuMs = Map<string, number>;

export class ClassHours {
  private readonly hours = new Map<number, ClassGpuMs>();

  /** `sum(from, to)`: the store's sum over [from, to]; `coveredTo`: where the samples end. */
  constructor(private readonly sum: (from: number, to: number) => ClassGpuMs) {}

  byClass(from: number, to: number, coveredTo: number): ClassGpuMs {
    const firstHour = Math.ceil(from / HOUR) * HOUR;
    const lastHourEnd = Math.min(Math.floor(to / HOUR), Math.floor(coveredTo / HOUR)) * HOUR;
    if (lastHourEnd <= firstHour) return this.sum(from, to);
    for (const start of this.hours.keys()) if (start < firstHour - HOUR) this.hours.delete(start);
    const total = this.sum(from, firstHour);
    for (let start = firstHour; start < lastHourEnd; start += HOUR) {
      let hour = this.hours.get(start);
      if (!hour) {
        hour = this.sum(start, start + HOUR);
        this.hours.set(start, hour);
      }
      add(total, hour);
    }
    add(total, this.sum(lastHourEnd, to));
    return total;
  }

  /** Forgets every hour: after a rollback, or rows deleted. */
  clear(): void {
    this.hours.clear();
  }
}

function add(into: ClassGpuMs, more: ClassGpuMs): void {
  for (const [className, ms] of more) into.set(className, (into.get(className) ?? 0) + ms);
}
