import type { jobView } from '../../service/views.ts';
import { when } from '../format.ts';

type JobView = ReturnType<typeof jobView>;
/** undefined: a service from before it said (2026-12). */
type Stopping = JobView['stopping'] | undefined;

/**
 * "stopping: 1 replica still running, 4 GPUs held (SIGKILL in 95 s)": a job whose replicas boa stops but
 * which still run within their grace (a cancelled job read "0 GPUs" while its process ran on for the
 * whole grace: a review). `now`: this machine's clock, against the service's killAt; 'at': the time
 * itself, for lines said on a change (`jobs wait`, `logs -f`), which a countdown would change every poll.
 */
export function stoppingNote(job: { stopping?: Stopping }, now: number | 'at'): string | null {
  const stopping = job.stopping;
  if (!stopping) return null;
  const n = stopping.replicas;
  const kill = killText(stopping.killAt, now);
  return `stopping: ${n} replica${n === 1 ? '' : 's'} still running, ${stopping.gpus} GPU${stopping.gpus === 1 ? '' : 's'} held (${kill})`;
}

/** undefined: a service from before it said (2026-12). */
type HeldBy = JobView['heldBy'] | undefined;

/**
 * "GPUs stopping replicas of job 3 still hold (SIGKILL in 95 s)": what a job waits for when boa places
 * nothing on those GPUs until the replicas are gone; null for a job not waiting for them. `now` as in
 * stoppingNote.
 */
export function heldByNote(job: { heldBy?: HeldBy }, now: number | 'at'): string | null {
  const held = job.heldBy;
  if (!held) return null;
  const jobs = `job${held.jobs.length === 1 ? '' : 's'} ${held.jobs.join(', ')}`;
  return `GPUs stopping replicas of ${jobs} still hold (${killText(held.killAt, now)})`;
}

/** When SIGKILL comes (null: the SIGTERM is not sent yet, the whole grace ahead), as a note says it. */
function killText(killAt: string | null, now: number | 'at'): string {
  if (killAt === null) return 'SIGTERM being sent';
  return now === 'at'
    ? `SIGKILL at ${when(killAt)} at the latest`
    : `SIGKILL ${killIn(Date.parse(killAt) - now)}`;
}

function killIn(ms: number): string {
  if (!(ms > 500)) return 'due now';
  const s = Math.round(ms / 1000);
  return s < 120 ? `in ${s} s` : `in ${Math.round(s / 60)} min`;
}

/** The list's GPUs: the job's width, and those its stopping replicas still hold ("0+4 stopping"). */
export function gpusCell(job: { width: number; stopping?: Stopping }): string | number {
  return job.stopping ? `${job.width}+${job.stopping.gpus} stopping` : job.width;
}

/** A job ended (its state final) whose replicas are gone: what `jobs wait` waits for, as kubectl delete --wait. */
export function stoppedFor(job: { stopping?: Stopping }): boolean {
  return !job.stopping;
}
