import type { ServiceJob } from './jobs.ts';
import type { ReplicaStatus } from './ports.ts';

/** A generation of a job boa stopped (ended, moved, rescaled) that the executor may have started. */
export interface OrderedStop {
  readonly jobId: number;
  readonly generation: number;
  /** Node id per GPU, as the generation had them. */
  readonly allocation: readonly string[];
  /** Passes started when it was stopped: a later pass's answer tells whether its replicas still run. */
  readonly pass: number;
}

const key = (jobId: number, generation: number) => `${jobId}/${generation}`;

/**
 * Stops boa ordered that the executor has not answered about yet: a job cancelled (or moved, narrowed)
 * after a pass sent its replicas but before an answer listed them (the answer failed, or came from an
 * earlier pass) holds its GPUs until a pass started after the stop answers. Then the live replicas
 * (stopping-replicas.ts) say what still runs. In memory only: after a restart of boa, the executor's first
 * answer lists every replica there is, stopping ones included (boot waits a few seconds for it).
 */
export class OrderedStops {
  private readonly stops = new Map<string, OrderedStop>();
  /** The job generations the last answer listed (ended ones too): the executor knows them. */
  private listed: ReadonlySet<string> = new Set();
  /** Changes with every stop ordered or told (StoppingGpus rebuilds its map on a change). */
  version = 0;

  /**
   * `sent`: a pass has sent the generation's replicas to the executor (so it may have started them);
   * one never sent, or that the last answer listed, holds nothing here.
   */
  order(job: ServiceJob, generation: number, allocation: readonly string[], sent: boolean, pass: number) {
    // Whatever is kept: the job's replicas of that generation now stop, which the held map counts.
    this.version += 1;
    if (!sent || allocation.length === 0 || this.listed.has(key(job.id, generation))) return;
    this.stops.set(key(job.id, generation), { jobId: job.id, generation, allocation, pass });
    this.version += 1;
  }

  /**
   * An answer of the pass started `pass`-th: the stops ordered before that pass started, and those it
   * lists (the live replicas hold for them from here), are told. Returns whether any was.
   */
  answered(statuses: readonly ReplicaStatus[], pass: number): boolean {
    this.listed = new Set(statuses.map((r) => key(r.jobId, r.generation)));
    const before = this.stops.size;
    for (const [k, stop] of this.stops) {
      if (stop.pass >= pass && !this.listed.has(k)) continue;
      this.stops.delete(k);
      this.version += 1;
    }
    return this.stops.size < before;
  }

  /**
   * The stops still untold whose job does not run at that generation again (a tick rolled back puts it
   * back): level-triggered, so an undone decision holds nothing.
   */
  *pending(jobs: ReadonlyMap<number, ServiceJob>): Iterable<OrderedStop> {
    for (const stop of this.stops.values()) {
      const job = jobs.get(stop.jobId);
      if (job?.state === 'running' && job.generation === stop.generation) continue;
      yield stop;
    }
  }

  get size(): number {
    return this.stops.size;
  }
}
