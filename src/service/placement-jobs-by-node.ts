/**
 * The jobs the incremental placement (placement.ts) holds on each node, by node number, kept as it holds
 * and releases them: the idle fill asks which jobs run beside a few nodes' idle GPUs, and a pass over
 * every job to find them (a map lookup and a slot scan each, their objects cold by then) was about a
 * tenth of the decision at 1,000 jobs past the budget window (bench:tick, docs/benchmarks.md).
 */
export class JobsByNode {
  /** Emptied sets are kept for the node's next jobs: node numbers are bounded (placement.ts). */
  private readonly jobsOn = new Map<number, Set<number>>();

  /** Notes job `id` on each node of `slots`. */
  add(id: number, slots: readonly number[]): void {
    for (let i = 0; i < slots.length; i++) {
      const n = slots[i] as number;
      // A slot a GPU: a node repeats, mostly next to itself.
      if (n === slots[i - 1]) continue;
      const jobs = this.jobsOn.get(n);
      if (jobs === undefined) this.jobsOn.set(n, new Set([id]));
      else jobs.add(id);
    }
  }

  /** Takes job `id` off each node of `slots`. */
  remove(id: number, slots: readonly number[]): void {
    for (let i = 0; i < slots.length; i++) {
      const n = slots[i] as number;
      if (n !== slots[i - 1]) this.jobsOn.get(n)?.delete(id);
    }
  }

  clear(): void {
    this.jobsOn.clear();
  }

  /** The ids of the jobs with a GPU on any of `nodes`, ascending (the service's job order). */
  on(nodes: Iterable<number>): number[] {
    const ids = new Set<number>();
    for (const n of nodes) for (const id of this.jobsOn.get(n) ?? []) ids.add(id);
    return [...ids].sort((a, b) => a - b);
  }
}
