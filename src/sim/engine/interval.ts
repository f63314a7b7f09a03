/**
 * One interval between ticks: every running job progresses at its speed (its GPU type's and, when
 * co-located, its group's share: truth/hardware.ts). A job alone on t4 runs at exactly 1, the measured
 * model untouched. A group's members are advanced together and their rates recomputed whenever one of
 * them finishes inside the interval (the others then have the GPUs to themselves).
 */
import type { GpuType } from '../gpu-types.ts';
import { colocationRates, type StepSplit, stepSplitOn, typeSpeed } from '../truth/hardware.ts';
import type { SimJob } from './job.ts';

/** The job's speed alone on its GPUs: the slowest type it holds (synchronous data parallelism). */
function aloneSpeed(job: SimJob): number {
  let onlyT4 = true;
  for (const type of job.gpusByType.keys()) if (type !== 't4') onlyT4 = false;
  if (onlyT4) return 1;
  const split = job.stepSplit();
  if (split === undefined) return 1;
  let speed = Number.POSITIVE_INFINITY;
  for (const type of job.gpusByType.keys()) {
    speed = Math.min(speed, typeSpeed(job.app, type, job.placement, split));
  }
  return speed;
}

/** The slowest type of the group's shared GPUs. */
function groupType(job: SimJob): GpuType {
  let slowest: GpuType = 't4';
  let worst = Number.POSITIVE_INFINITY;
  const split = job.stepSplit();
  for (const type of job.gpusByType.keys()) {
    const s = split === undefined ? 1 : typeSpeed(job.app, type, job.placement, split);
    if (s < worst) {
      worst = s;
      slowest = type;
    }
  }
  return slowest;
}

function setGroupSpeeds(members: readonly SimJob[], interference: number): void {
  const type = groupType(members[0] as SimJob);
  const splits: StepSplit[] = members.map((job) => {
    const split = job.stepSplit() ?? { compute: 1, comm: 0 };
    return stepSplitOn(job.app, type, job.placement, split);
  });
  const shares = colocationRates(splits, interference);
  members.forEach((job, i) => {
    job.speed = aloneSpeed(job) * (shares[i] as number);
  });
}

/**
 * Advances every active job over [from, until]; returns those that completed. `groups` are job-id lists
 * from the tick's decision (members already hold identical allocations).
 */
export function advanceInterval(
  active: readonly SimJob[],
  groups: readonly (readonly number[])[],
  from: number,
  until: number,
  interference: number,
): SimJob[] {
  const completions: SimJob[] = [];
  if (groups.length === 0) {
    for (const job of active) {
      job.speed = aloneSpeed(job);
      if (job.advance(from, until) !== null) completions.push(job);
    }
    return completions;
  }
  const grouped = new Set<number>();
  const byId = new Map(active.map((j) => [j.id, j]));
  for (const group of groups) {
    const members = group.map((id) => byId.get(id) as SimJob);
    for (const job of members) grouped.add(job.id);
    let running = members.filter((j) => j.allocation.length > 0);
    let t = from;
    while (running.length > 1 && t < until) {
      setGroupSpeeds(running, interference);
      // At least a nanosecond per step, so rounding at a finish cannot stall the loop.
      const end = Math.min(until, Math.max(t + 1e-9, Math.min(...running.map((j) => j.finishTime(t)))));
      for (const job of running) {
        if (job.advance(t, end, running.length) !== null) completions.push(job);
      }
      running = running.filter((j) => j.completedAt === null);
      t = end;
    }
    if (running.length === 1) {
      // Its partners finished inside the interval: the rest of it alone on the GPUs.
      const job = running[0] as SimJob;
      job.colocatedWith = [];
      job.speed = aloneSpeed(job);
      if (t < until && job.advance(t, until) !== null) completions.push(job);
    }
  }
  for (const job of active) {
    if (grouped.has(job.id)) continue;
    job.speed = aloneSpeed(job);
    if (job.advance(from, until) !== null) completions.push(job);
  }
  return completions;
}
