import { ServiceError } from './errors.ts';
import { workFromDuration } from './estimators.ts';
import { type ServiceJob, plannedWidth } from './jobs.ts';
import type { BoaService } from './service.ts';
import { type ClassState, MAX_WORK_SAMPLES } from './state.ts';
import { judgeWorkSample } from './trust.ts';
import { learnEpoch } from './learned-speedups.ts';
import { onInstanceType, trimSamples } from './work-samples.ts';
import { type ReportSequence, overtaken, recordSequence } from './report-sequence.ts';
import type { SpeedupTable } from '../core/profile.ts';

/**
 * A job's progress report: its statistical epoch (and work done in it); a finished epoch is evidence.
 * `generation`: the reporting replica's. Of a job boa runs, one since replaced changes nothing
 * (fromReplacedReplicas). Of a self-launched job (one process across generations), a report sent just
 * before a rescale, landing after it, retries included, still moves the epoch on, but the epoch it starts
 * is not timed: its clock would count the restart as work (found in review: an epoch learned at 3x its work).
 * `sequence`: the report's place among its sender's; one older than a report already taken from that
 * sender changes nothing and the job is returned as it is (answered as a poll).
 */
export function reportProgress(
  svc: BoaService,
  job: ServiceJob,
  statEpoch: number,
  workDoneSeconds: number | undefined,
  generation?: number,
  sequence?: ReportSequence,
): ServiceJob {
  if (workDoneSeconds !== undefined && !(Number.isFinite(workDoneSeconds) && workDoneSeconds >= 0)) {
    throw new ServiceError(
      400,
      'invalid',
      'workDoneSeconds must be a number >= 0 (1-GPU seconds of work done in the current statistical epoch)',
      'workDoneSeconds',
    );
  }
  const epochs = statEpochsOf(svc, job.className);
  if (!Number.isInteger(statEpoch) || statEpoch < 0 || statEpoch >= epochs) {
    throw new ServiceError(
      400,
      'invalid',
      `statEpoch must be an integer from 0 to ${epochs - 1} for class ${job.className}`,
      'statEpoch',
    );
  }
  if (generation !== undefined && generation > job.generation) {
    throw new ServiceError(
      409,
      'generation_ahead',
      `job ${job.id} is at generation ${job.generation}; a replica cannot report from generation ${generation}`,
      'generation',
    );
  }
  // Before the epoch's check: a retry of a report taken is answered as taken, not as refused; a replaced
  // replica is answered the allocation that tells it to stop.
  if (fromReplacedReplicas(svc, job, generation) || overtaken(svc, job, sequence)) return job;
  if (statEpoch < job.statEpoch) {
    throw new ServiceError(
      409,
      'epoch_regressed',
      `job ${job.id} is already in statistical epoch ${job.statEpoch}; epochs only advance`,
      'statEpoch',
    );
  }
  // Rolled back (disk full, an I/O error), memory goes back to what the store holds: otherwise the
  // client's retry of the report finds its epoch reached and saves nothing, and the class keeps a
  // sample the store lacks (learned again from the same epoch after a restart).
  const undo = progressUndo(svc, job);
  try {
    const now = svc.deps.clock.now();
    // Every report taken is recorded, even one that changes nothing else (a replaced generation's
    // epoch 0): the epoch, work and clock cannot tell a job that reported from one that never did.
    job.lastReportAt = now;
    if (statEpoch === job.statEpoch) {
      const startedNow = startsEpochClock(job, generation, workDoneSeconds);
      if (startedNow) Object.assign(job, { epochStartedAt: now, epochTimedFromReport: true });
      if (workDoneSeconds !== undefined) job.workDoneSeconds = workDoneSeconds;
      svc.deps.repo.transaction(() => {
        svc.deps.repo.saveJobState(job);
        recordSequence(svc, job, sequence, now);
      });
      return job;
    }
    // Only the next epoch ends the current one alone: a report that skips epochs spans several, and its
    // duration is not the work of the epoch it leaves.
    const sampled = statEpoch === job.statEpoch + 1 && recordWorkSample(svc, job, now);
    job.statEpoch = statEpoch;
    job.workDoneSeconds = workDoneSeconds ?? 0;
    job.epochStartedAt = job.allocation.length > 0 ? now : null;
    job.epochTimedFromReport = true;
    // From a replaced generation: the epoch's clock belongs to that one, so it takes no sample.
    job.epochGeneration = Math.min(job.generation, generation ?? job.generation);
    svc.deps.repo.transaction(() => {
      svc.deps.repo.saveJobState(job);
      recordSequence(svc, job, sequence, now);
      // Every class's samples are one stored value (tens of KB): written only when one was taken.
      if (sampled) persistWorkSamples(svc, now);
    });
    return job;
  } catch (error) {
    undo();
    throw error;
  }
}

/**
 * Whether the report comes from replicas boa has since replaced, of a job it runs: each generation is new
 * processes, resumed from the checkpoint, which may be behind what the old ones reported. One still
 * stopping, or a late retry, put its epoch and work in place of the running generation's until that one's
 * next report (found in review). A self-launched job is one process across generations: its reports count.
 */
function fromReplacedReplicas(svc: BoaService, job: ServiceJob, generation: number | undefined): boolean {
  if (job.workload === null || generation === undefined || generation >= job.generation) return false;
  svc.deps.logger.debug(
    { event: 'report_from_replaced_generation', jobId: job.id, generation, current: job.generation },
    'progress report from a generation since replaced: changes nothing',
  );
  return true;
}

/**
 * A first report of the epoch a job was started in, from its running generation and with no work done
 * yet: the job is up (the clients report as soon as they run), so the epoch's clock starts again here
 * and leaves out the
 * startup (an image pull on a new node, CUDA and NCCL): timed from the allocation, every job of a class
 * counted its startup beyond the profile's rescaleSeconds as work (found in review: cifar10's epoch 0
 * read 1.57x its work after 20 jobs that took 120 s to start).
 */
function startsEpochClock(
  job: ServiceJob,
  generation: number | undefined,
  workDoneSeconds: number | undefined,
): boolean {
  return (
    job.statEpoch === 0 &&
    !job.epochTimedFromReport &&
    (workDoneSeconds ?? 0) === 0 &&
    job.epochStartedAt !== null &&
    job.allocation.length > 0 &&
    job.epochGeneration === job.generation &&
    (generation ?? job.generation) === job.generation
  );
}

/** What a progress report changes in memory, put back by the function returned. */
function progressUndo(svc: BoaService, job: ServiceJob): () => void {
  const { statEpoch, workDoneSeconds, epochStartedAt, epochGeneration, epochTimedFromReport, lastReportAt } =
    job;
  const cls = svc.state.classes.get(job.className);
  const samples = cls?.workSamples.map((epoch) => [...epoch]);
  return () => {
    Object.assign(job, {
      statEpoch,
      workDoneSeconds,
      epochStartedAt,
      epochGeneration,
      epochTimedFromReport,
      lastReportAt,
    });
    if (cls && samples) cls.workSamples = samples;
  };
}

/** Jobs whose dropped work sample was logged at warn. */
const jobsWarned = new WeakSet<ServiceJob>();

/**
 * A clean epoch (one allocation throughout, at the planned width, or that and the GPUs the idle fill
 * lent) tells us its 1-GPU work. True when a sample was kept (the class's samples changed).
 */
export function recordWorkSample(svc: BoaService, job: ServiceJob, now: number): boolean {
  const cls = svc.state.classes.get(job.className);
  if (!cls || job.epochStartedAt === null || job.generation !== job.epochGeneration) return false;
  // Begun before a start on another instance type (its pods kept on the old nodes): partly measured on
  // the old GPUs, it would be read as the new type's.
  const typeSince = svc.state.instanceTypeSince;
  if (typeSince !== undefined && job.epochStartedAt < typeSince) return false;
  const width = job.allocation.length;
  const epoch = cls.profile.epochs[job.statEpoch];
  const speedup = epoch?.speedup[String(width)];
  // Lent GPUs count: with the idle fill a lone job runs lent most of its life, and its epochs are as
  // clean as any (a widening is a new generation, so the epoch ran at this width throughout).
  if (!epoch || !speedup || width - job.idleFillGpus !== plannedWidth(job)) return false;
  // Only the first epoch begins with a (re)start, and only a clock started at the allocation holds it:
  // a later epoch whose width changed is not clean.
  const rescale = job.statEpoch === 0 && !job.epochTimedFromReport ? cls.profile.rescaleSeconds : 0;
  const sample = workFromDuration((now - job.epochStartedAt) / 1000, rescale, speedup);
  const verdict = judgeWorkSample(epoch.workSeconds, sample);
  if (!verdict.use) {
    // Once a job at warn: a job that runs shorter than its class (an example, a test run) would
    // otherwise fill the log with one warning an epoch.
    const first = !jobsWarned.has(job);
    jobsWarned.add(job);
    svc.deps.logger[first ? 'warn' : 'debug'](
      {
        event: 'work_sample_dropped',
        jobId: job.id,
        class: job.className,
        statEpoch: job.statEpoch,
        workSeconds: sample,
        reason: verdict.reason,
      },
      first ? "work sample ignored (this job's further ones are logged at debug)" : 'work sample ignored',
    );
    return false;
  }
  // Kept as measured; the plan reads it clamped to the profile's bounds (estimatedClasses). Stored
  // clamped, a profile corrected to what jobs showed read its samples as half the new work. Its width
  // is what the class's speedups are learned from (learned-speedups.ts).
  // Kept with the instance type it ran on: the plan reads only the samples of the type configured.
  const { instanceType } = svc.deps.config;
  const samples = (cls.workSamples[job.statEpoch] ??= []);
  const before = learnEpoch(epoch, onInstanceType(samples, instanceType)).speedup;
  samples.push({ workSeconds: sample, width, instanceType });
  trimSamples(samples, MAX_WORK_SAMPLES, instanceType);
  // A correction that took effect (or changed) is planned for now, not at the next timed re-plan.
  const after = learnEpoch(epoch, onInstanceType(samples, instanceType)).speedup;
  if (!sameTable(before, after)) void svc.planner.request('speedups learned');
  return true;
}

/** Stores every class's samples (inside the caller's transaction); `classes`: the state about to be. */
export function persistWorkSamples(
  svc: BoaService,
  now: number,
  classes: ReadonlyMap<string, ClassState> = svc.state.classes,
): void {
  const all = Object.fromEntries([...classes].map(([name, c]) => [name, c.workSamples]));
  svc.deps.repo.putSetting('workSamples', all, now);
}

function sameTable(a: SpeedupTable, b: SpeedupTable): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/** The statistical epochs of a class: reports take 0 to this less 1 (a class removed: one). */
export function statEpochsOf(svc: BoaService, className: string): number {
  return svc.state.classes.get(className)?.profile.epochs.length ?? 1;
}
