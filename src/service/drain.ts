/**
 * The drain in the service (core/exec/drain-widths.ts, the simulator's rule too): once nothing has
 * been submitted for `drainAfterHours` and every job runs at its width, the running jobs take the GPUs
 * the budget allows, whole nodes within the budget and the spend ceiling.
 */
import { DEFAULT_DRAIN, drainWidths } from '../core/exec/drain-widths.ts';
import type { ServiceJob } from './jobs.ts';
import { estimatedClasses } from './plan-inputs.ts';
import type { BoaService } from './service.ts';

const HOUR = 3_600_000;

/** Widths for the drain, or undefined when it does not apply (`widthOf` then stands). */
export function drainedWidths(
  svc: BoaService,
  jobs: readonly ServiceJob[],
  widthOf: (job: ServiceJob) => number,
  maxGpus: number,
  now: number,
): ((job: ServiceJob) => number) | undefined {
  const { config } = svc.deps;
  const { budget, lastSubmittedAt } = svc.state;
  const afterHours = config.drainAfterHours;
  if (!(afterHours > 0) || budget === undefined || lastSubmittedAt === undefined) return undefined;
  if (now - lastSubmittedAt < afterHours * HOUR || jobs.length === 0) return undefined;
  // Anything waiting (for nodes, the budget or its plan) ends the drain: the plan serves it first.
  if (jobs.some((job) => job.width === 0 || widthOf(job) === 0)) return undefined;
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
      width: Math.max(widthOf(job), job.width),
      // The service does not see a restart end (the replicas do not say); a job widened once is widened
      // again only when a finished job frees GPUs, which the restart threshold already bounds.
      restarting: false,
    })),
    classes,
    gpus,
    { ...DEFAULT_DRAIN, afterHours },
  );
  if (widths === undefined) return undefined;
  return (job) => widths.get(job.id) ?? widthOf(job);
}

/** Statistical progress, 0..1: the epochs done and the work reported in the current one. */
function progressOf(job: ServiceJob, epochs: ReadonlyArray<{ workSeconds: number }>): number {
  const total = epochs.reduce((sum, e) => sum + e.workSeconds, 0);
  if (!(total > 0)) return 0;
  let done = job.workDoneSeconds;
  for (let e = 0; e < Math.min(job.statEpoch, epochs.length); e++)
    done += (epochs[e] as { workSeconds: number }).workSeconds;
  return Math.min(1, done / total);
}
