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
  const kill =
    stopping.killAt === null
      ? 'SIGTERM being sent'
      : now === 'at'
        ? `SIGKILL at ${when(stopping.killAt)} at the latest`
        : `SIGKILL ${killIn(Date.parse(stopping.killAt) - now)}`;
  return `stopping: ${n} replica${n === 1 ? '' : 's'} still running, ${stopping.gpus} GPU${stopping.gpus === 1 ? '' : 's'} held (${kill})`;
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
