/**
 * What the replicas' states mean for their jobs, taken in the order they ended: rank 0 exiting 0 (or an
 * older generation's rank 0 that finished the job) is the job done; a replica stopped from outside
 * resumes the generation; a failure restarts it or fails the job (replica-exits.ts). Only the job's
 * current generation counts, but for a rank 0 of an older one that finished on its own.
 */
import { olderGenerationFinished } from './older-exits.ts';
import type { ReplicaStatus } from './ports.ts';
import { failGeneration, interruptedGeneration, lastEnd } from './replica-exits.ts';
import type { BoaService } from './service.ts';
import { guardedStep } from './job-steps.ts';

/**
 * `judged`: the pool has been listed since the start (else only finishes are taken: execution.ts apply says why).
 * `forgetToken`: called for a job no longer running with a workload. Returns the jobs found done, and
 * whether a job's next generation is to start (a restart or a resume: followed up).
 */
export function takeReplicaOutcomes(
  service: BoaService,
  byJob: ReadonlyMap<number, ReplicaStatus[]>,
  judged: boolean,
  forgetToken: (jobId: number) => void,
): { readonly done: ReadonlySet<number>; readonly settling: boolean } {
  let settling = false;
  // Jobs done, finished in the order they ended: each finish closes the ledger's interval at its end,
  // so a later end finished first would count an earlier job's GPUs until then.
  const done: Array<{ jobId: number; endedAt: number | undefined }> = [];
  // Restarts, resumes and failures: a failure for good closes the interval too, so each is taken in
  // the same order, at its generation's end (undefined: now, after the rest).
  const steps: Array<{ endedAt: number | undefined; take: () => void }> = [];
  for (const [jobId, replicas] of byJob) {
    const job = service.state.jobs.get(jobId);
    // An older generation's rank 0 that finished the job before boa moved it on (older-exits.ts).
    const finishedBefore = job && olderGenerationFinished(replicas, job);
    if (job?.workload && job.state === 'waiting' && finishedBefore) {
      done.push({ jobId, endedAt: finishedBefore.endedAt });
      continue;
    }
    if (!job?.workload || job.state !== 'running') {
      forgetToken(jobId);
      continue;
    }
    const current = replicas.filter((r) => r.generation === job.generation);
    const rank0 = current.find((r) => r.rank === 0);
    const interrupted = current.find((r) => r.interrupted);
    // The one that says a restart cannot help, if any: a peer's exit 1 at its rendezvous's loss must
    // not hide it.
    const failed =
      current.find((r) => r.phase === 'failed' && r.notRestartable !== undefined) ??
      current.find((r) => r.phase === 'failed');
    if ((rank0?.phase === 'succeeded' && !rank0.interrupted) || finishedBefore) {
      done.push({ jobId, endedAt: (rank0?.phase === 'succeeded' ? rank0 : finishedBefore)?.endedAt });
    } else if (!judged) {
      continue;
    } else if (interrupted) {
      steps.push({
        endedAt: undefined,
        take: () =>
          guardedStep(service, jobId, 'resume', () => interruptedGeneration(service, job, interrupted)),
      });
      // Its new generation starts at once, or when its backoff ends: followed up, not left to the
      // next tick (up to tickSeconds later) when none of its replicas is left running.
      settling = true;
    } else if (failed) {
      const endedAt = lastEnd(current);
      steps.push({
        endedAt,
        take: () => guardedStep(service, jobId, 'fail', () => failGeneration(service, job, failed, endedAt)),
      });
      settling = true;
    }
  }
  // Every finish in the order of the ends: one taken at a later end first moves allocatedFrom there,
  // clamping every earlier end seen in this pass to it. Done jobs before steps at the same end.
  const endOf = (d: { endedAt: number | undefined }) => d.endedAt ?? Number.MAX_SAFE_INTEGER;
  const finishes = done.map(({ jobId, endedAt }) => ({
    endedAt,
    take: () =>
      guardedStep(service, jobId, 'finish', () =>
        service.finishJob(jobId, 'done', undefined, undefined, endedAt),
      ),
  }));
  for (const { take } of [...finishes, ...steps].sort((a, b) => endOf(a) - endOf(b))) take();
  return { done: new Set(done.map((d) => d.jobId)), settling };
}
