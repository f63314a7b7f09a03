import { gpusPerNodeOf } from '../../core/exec/placement.ts';
import type { ProfileFile } from '../../core/profile.ts';
import type { TraceJob } from '../../core/trace.ts';
import { jobClassOf } from '../engine/job-class.ts';
import { type JobClass, SimJob } from '../engine/job.ts';
import type { JobTruth } from '../truth/model.ts';
import { type Allocation, ApiError, type LauncherClient } from './api-client.ts';
import type { Workload } from '../../service/ports.ts';

/** What survives a crash of the replay: enough to resume the same run from its last step. */
export interface WorldSnapshot {
  readonly version: 1;
  /** Virtual time, seconds since the trace's start. */
  readonly now: number;
  readonly nextArrival: number;
  readonly jobs: ReadonlyArray<{
    readonly trace: number;
    readonly serviceId: number;
    readonly progress: number;
    readonly reportedEpoch: number;
    readonly rescales: number;
    readonly completedAt: number | null;
    readonly firstStart: number | null;
    readonly attainedGpuSeconds: number;
  }>;
}

interface Emulated {
  readonly trace: number;
  readonly serviceId: number;
  readonly sim: SimJob;
  reportedEpoch: number;
  generation: number;
}

/**
 * Emulated training jobs that follow the service's allocations as a launcher would: register on
 * arrival, poll the allocation, restart when its generation changes (30 s of no progress), report
 * each new statistical epoch, and say when they finish. Their speed is the measured ground truth at
 * the placement the service gave them, exactly as in the simulator.
 */
export class ReplayWorld {
  private readonly emulated: Emulated[] = [];
  private readonly classes = new Map<string, JobClass>();
  private readonly nodeNumbers = new Map<string, number>();
  nextArrival = 0;

  constructor(
    private readonly client: LauncherClient,
    private readonly trace: readonly TraceJob[],
    private readonly profiles: ProfileFile,
    private readonly truthOf: (app: string) => JobTruth,
    private readonly rescaleSeconds: number,
    /** Registered with every job: the service's executor runs it as the job's replicas. */
    private readonly workload?: Workload,
  ) {}

  private classOf(app: string): JobClass {
    let cls = this.classes.get(app);
    if (!cls) {
      const profile = this.profiles.classes.find((c) => c.name === app);
      if (!profile) throw new Error(`no profile for application "${app}"`);
      cls = jobClassOf(profile, this.truthOf(app));
      this.classes.set(app, cls);
    }
    return cls;
  }

  get done(): boolean {
    return this.nextArrival >= this.trace.length && this.emulated.every((e) => e.sim.completedAt !== null);
  }

  /**
   * Moves the world over (from, to]: jobs run on their allocations, and arrivals (registration) and
   * completions reach the service at their exact times, in time order. `existing` maps trace job names
   * the service already has (a resumed replay must not register a job twice).
   */
  async step(from: number, to: number, setTime: (t: number) => void, existing: Map<string, { id: number }>) {
    const events: Array<{ at: number; act: () => Promise<unknown> }> = [];
    for (const e of this.emulated) {
      if (e.sim.completedAt !== null) continue;
      // Each new epoch is reported when the job enters it, as a job's client does: reported at the next
      // tick instead, an epoch was timed from up to a tick late, and a short last one, ended by the exact
      // completion, read as several times faster than its class (a work_sample_dropped warning in the demo).
      for (const { epoch, at } of e.sim.epochsEntered(from, to))
        events.push({ at, act: () => this.reportEpoch(e, epoch) });
      const at = e.sim.advance(from, to);
      if (at !== null) events.push({ at, act: () => this.client.complete(e.serviceId) });
    }
    for (let index = this.nextArrival; index < this.trace.length; index++) {
      const job = this.trace[index] as TraceJob;
      if (job.time > to) break;
      events.push({ at: job.time, act: () => this.admit(index, job, existing) });
    }
    events.sort((a, b) => a.at - b.at);
    for (const event of events) {
      setTime(event.at);
      await event.act();
    }
  }

  private async admit(index: number, job: TraceJob, existing: Map<string, { id: number }>): Promise<void> {
    const serviceId =
      existing.get(job.name)?.id ?? (await this.client.register(job.application, job.name, this.workload)).id;
    this.emulated.push({
      trace: index,
      serviceId,
      sim: new SimJob(index, job, this.classOf(job.application)),
      reportedEpoch: 0,
      generation: -1,
    });
    this.nextArrival = index + 1;
  }

  /** Before a tick: each running job reports the statistical epoch it has reached, if not yet reported. */
  async report(): Promise<void> {
    for (const e of this.emulated) {
      if (e.sim.completedAt !== null) continue;
      await this.reportEpoch(e, e.sim.statEpoch);
    }
  }

  private async reportEpoch(e: Emulated, epoch: number): Promise<void> {
    if (epoch <= e.reportedEpoch) return;
    try {
      await this.client.progress(e.serviceId, epoch);
    } catch (error) {
      // Resumed from a snapshot older than the crash: the service already has this epoch (it only
      // keeps the highest), as a real job restarting from its checkpoint would find.
      if (!(error instanceof ApiError && error.code === 'epoch_regressed')) throw error;
    }
    e.reportedEpoch = epoch;
  }

  /** After a tick: each job reads its allocation and restarts on it when the generation changed. */
  async follow(now: number): Promise<void> {
    for (const e of this.emulated) {
      if (e.sim.completedAt !== null) continue;
      const allocation = await this.client.allocation(e.serviceId);
      if (allocation.generation === e.generation) continue;
      e.generation = allocation.generation;
      const slots = this.slotsOf(allocation);
      e.sim.assign(slots, slots.length ? gpusPerNodeOf(slots) : [], now, this.rescaleSeconds);
    }
  }

  private slotsOf(allocation: Allocation): number[] {
    const slots: number[] = [];
    for (const { node, gpus } of allocation.nodes) {
      let n = this.nodeNumbers.get(node);
      if (n === undefined) {
        n = this.nodeNumbers.size;
        this.nodeNumbers.set(node, n);
      }
      for (let g = 0; g < gpus; g++) slots.push(n);
    }
    return slots.sort((a, b) => a - b);
  }

  snapshot(now: number): WorldSnapshot {
    return {
      version: 1,
      now,
      nextArrival: this.nextArrival,
      jobs: this.emulated.map((e) => ({
        trace: e.trace,
        serviceId: e.serviceId,
        progress: e.sim.progress,
        reportedEpoch: e.reportedEpoch,
        rescales: e.sim.rescales,
        completedAt: e.sim.completedAt,
        firstStart: e.sim.firstStart,
        attainedGpuSeconds: e.sim.attainedGpuSeconds,
      })),
    };
  }

  /**
   * Resumes from a snapshot. The jobs died with the process, as real ones would with their node:
   * they resume from their saved progress and restart on their next allocation (generation unknown).
   */
  restore(snapshot: WorldSnapshot): void {
    this.nextArrival = snapshot.nextArrival;
    for (const saved of snapshot.jobs) {
      const job = this.trace[saved.trace] as TraceJob;
      const sim = new SimJob(saved.trace, job, this.classOf(job.application));
      sim.progress = saved.progress;
      sim.rescales = saved.rescales;
      sim.completedAt = saved.completedAt;
      sim.firstStart = saved.firstStart;
      sim.attainedGpuSeconds = saved.attainedGpuSeconds;
      this.emulated.push({
        trace: saved.trace,
        serviceId: saved.serviceId,
        sim,
        reportedEpoch: saved.reportedEpoch,
        generation: -1,
      });
    }
  }

  /**
   * After a restore: jobs the service finished after the snapshot (a completion sent, then the crash
   * before the next snapshot) are finished here too, at the service's time, in seconds of the replay.
   * Without this such a job waits for GPUs the service no longer gives it, and the replay never ends.
   */
  finishFromService(finishedAt: ReadonlyMap<number, number>): void {
    for (const e of this.emulated) {
      const at = finishedAt.get(e.serviceId);
      if (e.sim.completedAt === null && at !== undefined) e.sim.completedAt = at;
    }
  }

  records() {
    return this.emulated.map((e) => ({
      arrival: e.sim.arrival,
      completedAt: e.sim.completedAt,
      rescales: e.sim.rescales,
      firstStart: e.sim.firstStart,
      attainedGpuSeconds: e.sim.attainedGpuSeconds,
    }));
  }
}
