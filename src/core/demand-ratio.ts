/**
 * The demand ratio: GPU-time allocated over what the plans in force expected, with exponential
 * forgetting. Online rates lag the arrivals (a prior counts as hours of none; a burst is read over a
 * window), so in a burst the plans allocate more than they expect; planning with budget / demand
 * narrows the next plan by what was observed, whatever the cause. One rule for the service (rebuilt
 * from its allocation samples, so a restart forgets nothing) and the simulator.
 */

export interface DemandRatioOptions {
  /** Observations count half after this long; 0: the ratio is not used (always 1). */
  readonly halfLifeSeconds: number;
  /**
   * The ratio is used no lower than this. 1: plans that allocate more than they expected narrow, but
   * allocating less (a lull, the drain) never widens the rest.
   */
  readonly floor: number;
  /** Before anything is observed the ratio is 1, weighted as this long at the prior's GPUs. */
  readonly priorSeconds: number;
}

/** The rule's settings when it is on (2 hours, the half-life measured); off is the service's default. */
export const DEFAULT_DEMAND_RATIO: DemandRatioOptions = {
  halfLifeSeconds: 2 * 3600,
  floor: 1,
  priorSeconds: 3600,
};

export class DemandRatio {
  #actual: number;
  #expected: number;
  #last: number | undefined;

  /** `priorGpus`: the GPUs the prior stands for (the budget's). */
  constructor(
    readonly options: DemandRatioOptions,
    priorGpus: number,
  ) {
    this.#actual = priorGpus * options.priorSeconds;
    this.#expected = this.#actual;
  }

  /** Books the interval ending at `now` (seconds): GPU-seconds allocated, and what the plans expected. */
  observe(now: number, allocatedGpuSeconds: number, expectedGpuSeconds: number): void {
    const dt = this.#last === undefined ? 0 : now - this.#last;
    this.#last = now;
    if (!(this.options.halfLifeSeconds > 0)) return;
    const decay = dt > 0 ? 0.5 ** (dt / this.options.halfLifeSeconds) : 1;
    this.#actual = this.#actual * decay + allocatedGpuSeconds;
    this.#expected = this.#expected * decay + expectedGpuSeconds;
  }

  /** Allocated over expected, at least the floor; 1 when not used. */
  ratio(): number {
    if (!(this.options.halfLifeSeconds > 0)) return 1;
    return Math.max(this.options.floor, this.#actual / this.#expected);
  }
}

export interface ExpectedInput {
  /** GPU-seconds the plan in force expected over the interval (its GPU-hours per hour, times it). */
  readonly planned: number;
  /** GPU-seconds allocated over it. */
  readonly allocated: number;
  /** The plan was at its minimum feasible budget: every job on its cheapest widths. */
  readonly atMinimum: boolean;
  /**
   * GPU-seconds the plan would have expected without the plan cap; undefined when the cap did not
   * hold it down.
   */
  readonly uncapped?: number;
}

/**
 * What counts as expected (anti-windup). A plan at its minimum cannot narrow further, so allocating
 * more than it expected there (a backlog) is no evidence for narrowing more: counting it held the
 * simulator's ratio at 2.4 through workload-2's burst and left a tenth of the budget unspent. Likewise
 * while the cap holds the plan down: allocating more than it expected, up to the uncapped budget, is the
 * load the cap does not plan for.
 */
export function expectedGpuSeconds(input: ExpectedInput): number {
  const { planned, allocated } = input;
  if (input.atMinimum) return Math.max(allocated, planned);
  if (input.uncapped !== undefined) return Math.max(planned, Math.min(allocated, input.uncapped));
  return planned;
}
