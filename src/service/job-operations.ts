import { closest } from './config-sources.ts';
import { ServiceError } from './errors.ts';
import { closeGpuTime, withoutJob } from './gpu-time.ts';
import { type ServiceJob, jobFromRow } from './jobs.ts';
import { followPlan } from './plan-inputs.ts';
import { ratesCheckOf } from './rates-check.ts';
import { nextDraw } from '../core/shares.ts';
import type { Workload } from './ports.ts';
import { persistWorkSamples, recordWorkSample } from './progress.ts';
import type { BoaService, EndState } from './service.ts';
import { hashToken, newToken } from './tokens.ts';
import { classesLeftOut } from './classes-over-bound.ts';

/** A registration's answer; `replayed` when its Idempotency-Key found an earlier job (idempotency.ts). */
export interface Registered {
  job: ServiceJob;
  token: string;
  replayed?: { tokenReplaced: boolean };
}

export function registerJob(
  svc: BoaService,
  className: string,
  name: string | undefined,
  workload?: Workload,
  idempotency?: { key: string; fingerprint: string },
): Registered {
  if (!svc.state.classes.has(className))
    throw new ServiceError(
      400,
      'unknown_class',
      unknownClassMessage(className, [...svc.state.classes.keys()]),
      'class',
    );
  // No plan would give it widths: it would wait for ever, unsaid (the class's error is in status).
  const leftOut = classesLeftOut(svc);
  if (leftOut?.classes.includes(className))
    throw new ServiceError(
      422,
      'class_left_out',
      `class ${className} is not planned: ${leftOut.message}`,
      'class',
    );
  if (workload) {
    checkWorkload(svc, workload);
    // A self-launched job is never judged by replicas, so an old job's cannot end it.
    const blocked = svc.execution.registrationBlocked();
    if (blocked) throw new ServiceError(503, 'executor_not_ready', blocked);
  }
  const tokenSeed = workload ? newToken() : null;
  const token = tokenSeed === null ? newToken() : svc.jobToken(tokenSeed);
  const now = svc.deps.clock.now();
  const { lastDraws } = svc.state;
  const draw = nextDraw(lastDraws.get(className) ?? svc.deps.repo.lastDraw(className), className);
  const row = svc.deps.repo.transaction(() => {
    const inserted = svc.deps.repo.insertJob({
      name: name ?? className,
      className,
      tokenHash: hashToken(token),
      state: 'waiting',
      submittedAt: now,
      allocation: [],
      workload: workload ?? null,
      tokenSeed,
      lastSeenAt: now,
      // Booked GPU-time from submission (gpu-time.ts): none until it is placed.
      gpuMs: 0,
      gpuMsSince: now,
      draw,
      idempotencyKey: idempotency?.key ?? null,
      requestFingerprint: idempotency?.fingerprint ?? null,
    });
    const job = jobFromRow(inserted);
    if (followPlan(svc, job)) svc.deps.repo.saveJobState(job);
    return job;
  });
  lastDraws.set(className, draw);
  svc.state.lastSubmittedAt = now;
  svc.state.jobs.set(row.id, row);
  svc.deps.logger.info({ event: 'job_registered', jobId: row.id, class: className }, 'job registered');
  ratesCheckOf(svc).afterRegistration(svc.state.jobs.size);
  return { job: row, token };
}

function checkWorkload(svc: BoaService, workload: Workload): void {
  const { executor } = svc.deps;
  if (!executor) {
    throw new ServiceError(
      422,
      'no_executor',
      'this service runs no executor, so it cannot run a workload; submit without one',
      'workload',
    );
  }
  const problem = executor.checkWorkload?.(workload);
  if (problem) throw new ServiceError(422, 'workload_not_runnable', problem.message, problem.field);
}

/** Ends a job: its GPUs are freed at once; `failure` says why an executed or lost job ended. */
export function finishJob(
  svc: BoaService,
  job: ServiceJob,
  state: EndState,
  failure?: { exitCode: number | null; reason: string },
  endedAt?: number,
): ServiceJob {
  if (job.state !== 'waiting' && job.state !== 'running') {
    if (job.state === state) return job;
    throw new ServiceError(409, 'already_finished', `job ${job.id} is already ${job.state}`);
  }
  // When its replicas ended, if the executor knows (a job that ended while the service was down), but
  // never before the allocation already recorded: the ledger's samples do not overlap.
  const now =
    endedAt === undefined
      ? svc.deps.clock.now()
      : Math.min(svc.deps.clock.now(), Math.max(endedAt, svc.state.allocatedFrom));
  // Rolled back (disk full, an I/O error), memory goes back to what the store holds: the job stays
  // active, its GPUs allocated, and the epoch is learned once, when the end is reported again.
  const undo = endUndo(svc, job);
  const before = { generation: job.generation, allocation: job.allocation };
  try {
    // Only a job in its class's last epoch ends that epoch by finishing: one done earlier never reported
    // the epochs it went through, and its time since is theirs too, not the current epoch's work.
    const epochs = svc.state.classes.get(job.className)?.profile.epochs.length;
    const sampled =
      state === 'done' && job.statEpoch === (epochs ?? 0) - 1 && recordWorkSample(svc, job, now);
    svc.deps.repo.transaction(() => {
      svc.flushAllocation(now);
      // What the ticks booked: the idle fill's GPUs were not (idle-fill.ts).
      svc.state.allocatedGpus -= job.allocation.length - job.idleFillGpus;
      svc.state.allocatedByClass = withoutJob(svc.state.allocatedByClass, job);
      closeGpuTime(job, now);
      job.state = state;
      job.finishedAt = now;
      job.allocation = [];
      job.width = 0;
      job.idleFillGpus = 0;
      job.generation += 1;
      job.generationSince = now;
      if (failure) {
        job.exitCode = failure.exitCode;
        job.failureReason = failure.reason;
      }
      svc.deps.repo.saveJobState(job);
      if (sampled) persistWorkSamples(svc, now);
    });
  } catch (error) {
    undo();
    throw error;
  }
  svc.state.jobs.delete(job.id);
  // Its replicas the executor may run hold their GPUs until it answers (ordered-stops.ts).
  svc.execution.stopOrdered(job, before.generation, before.allocation);
  svc.leases.forget(job.id);
  // A job failed for good or lost is at least as loud as the restarts before it (job_restart, warn).
  const level = state === 'failed' || state === 'lost' ? 'warn' : 'info';
  svc.deps.logger[level]({ event: `job_${state}`, jobId: job.id, ...failure }, `job ${state}`);
  return job;
}

/** What ending `job` changes in memory, put back by the function returned. */
function endUndo(svc: BoaService, job: ServiceJob): () => void {
  const { state, finishedAt, allocation, width, generation, generationSince, exitCode, failureReason } = job;
  const { idleFillGpus, gpuMs, gpuMsSince } = job;
  const { allocatedGpus, allocatedByClass, allocatedFrom } = svc.state;
  const cls = svc.state.classes.get(job.className);
  const samples = cls?.workSamples.map((epoch) => [...epoch]);
  return () => {
    Object.assign(job, {
      state,
      finishedAt,
      allocation,
      width,
      generation,
      generationSince,
      exitCode,
      failureReason,
      idleFillGpus,
      gpuMs,
      gpuMsSince,
    });
    svc.state.allocatedGpus = allocatedGpus;
    svc.state.allocatedByClass = allocatedByClass;
    svc.state.allocatedFrom = allocatedFrom;
    if (cls && samples) cls.workSamples = samples;
  };
}

/**
 * A submission's unknown class, a typo's likely meaning, and how a model of one's own gets a class:
 * a newcomer's own script was refused with only the list of known classes (found in a newcomer trial).
 */
function unknownClassMessage(className: string, known: readonly string[]): string {
  // Said as the closest name, not a typo's meaning: cifar100 and yolov5 are models of their own, a letter
  // away from cifar10 and yolov3 (found in review).
  const near = closest(className, known);
  return (
    `unknown class "${className}"${near ? ` (the closest known name: ${near})` : ''}; known classes: ${known.join(', ')}. ` +
    'A model of your own runs as the known class closest to it in scaling, or as a class of its own added ' +
    'first with its speedup table: boa classes put class.json (PUT /v1/classes/{name}; docs/jobs.md, "Which class?")'
  );
}
