/** Simulated time in seconds. The engine owns no wall clock: runs are exact and repeatable. */
export class VirtualClock {
  #now: number;

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  /** Moves time forward; time never runs backwards. */
  advanceTo(time: number): void {
    if (!(time >= this.#now))
      throw new RangeError(`the clock is at ${this.#now} s and cannot go back to ${time} s`);
    this.#now = time;
  }
}
