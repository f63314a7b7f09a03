/**
 * The drain in the service (core/exec/drain-widths.ts, the simulator's rule too): once nothing has
 * been submitted for `drainAfterHours` and every job runs at its width, the running jobs take the GPUs
 * the budget allows, whole nodes within the budget and the spend ceiling. The same, with no floor on
 * what a GPU adds, while the budget window pays more than `fillBelowBand` under its budget
 * (core/exec/band-fill.ts).
 */
import { BAND_FILL_DRAIN } from '../core/exec/band-fill.ts';
import { DEFAULT_DRAIN, drainWidths } from '../core/exec/drain-widths.ts';
import type { ServiceJob } from './jobs.ts';
import { estimatedClasses } from './plan-inputs.ts';
import type { BoaService } from './service.ts';

const HOUR = 3_600_000;

export interface Drained {
  readonly widthOf: (job: ServiceJob) => number;
  /** Submissions stopped `drainAfterHours` ago. */
  readonly draining: boolean;
  /** The window is under the budget's band: the fill's rule (no floor on what a GPU adds) applies. */
  readonly filling: boolean;
}

/** Nothing submitted for `afterHours` (0: never): the drain's test, and the idle fill's quiet rule's. */
export function submissionsStopped(
  afterHours: number,
  lastSubmittedAt: number | undefined,
  now: number,
): boolean {
  return afterHours > 0 && lastSubmittedAt !== undefined && now - lastSubmittedAt >= afterHours * HOUR;
}

/** Widths for the drain or the fill, or undefined when neither applies (`widthOf` then stands). */
export function drainedWidths(
  svc: BoaService,
  jobs: readonly ServiceJob[],
  widthOf: (job: ServiceJob) => number,
  maxGpus: number,
  now: number,
  belowBand: boolean,
): Drained | undefined {
  const { config } = svc.deps;
  const { budget, lastSubmittedAt } = svc.state;
  const afterHours = config.drainAfterHours;
  if (budget === undefined || jobs.length === 0) return undefined;
  const quiet = submissionsStopped(afterHours, lastSubmittedAt, now);
  if (!quiet && !belowBand) return undefined;
  // A job the plan or the ceiling leaves waiting ends both: the plan serves it first. A job that only
  // waits to start (a new one) ends the drain, but the fill makes room for it at its plan's width and
  // keeps what it handed out while everything fits the budget: otherwise each submission would take
  // every filled job back to its plan's width and the next tick widen it again, a restart each way.
  if (jobs.some((job) => widthOf(job) === 0)) return undefined;
  if (!belowBand && jobs.some((job) => job.width === 0)) return undefined;
  const perNode = config.gpusPerNode;
  const allowed = Math.min(budget.gpuHoursPerHour, maxGpus);
  const gpus = Math.floor(allowed / perNode + 1e-9) * perNode;
  const classes = new Map(estimatedClasses(svc).map((c) => [c.name, c]));
  const widths = drainWidths(
    jobs.map((job) => ({
      id: job.id,
      app: job.className,
      statEpoch: job.statEpoch,
      progressFraction: progressOf(job, classes.get(job.className)?.epochs ?? []),
      // Not the GPUs the idle fill lent (idle-fill.ts): they stay lent, unbooked and kept when the drain
      // ends, rather than becoming the drain's width and given back at the next submission.
      width: Math.max(widthOf(job), job.width - job.idleFillGpus),
      // The service does not see a restart end (the replicas do not say); a job widened once is widened
      // again only when a finished job frees GPUs, which the restart threshold already bounds.
      restarting: false,
    })),
    classes,
    gpus,
    // Both at once: the fill's rule, which hands out what the drain's floor would leave unspent.
    belowBand ? BAND_FILL_DRAIN : { ...DEFAULT_DRAIN, afterHours },
  );
  if (widths === undefined) return undefined;
  return { widthOf: (job) => widths.get(job.id) ?? widthOf(job), draining: quiet, filling: belowBand };
}

/** Statistical progress, 0..1: the epochs done and the work reported in the current one. */
export function progressOf(job: ServiceJob, epochs: ReadonlyArray<{ workSeconds: number }>): number {
  const total = epochs.reduce((sum, e) => sum + e.workSeconds, 0);
  if (!(total > 0)) return 0;
  let done = job.workDoneSeconds;
  for (let e = 0; e < Math.min(job.statEpoch, epochs.length); e++)
    done += (epochs[e] as { workSeconds: number }).workSeconds;
  return Math.min(1, done / total);
}
