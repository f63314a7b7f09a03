import type { JobRow, JobState } from '../store/repository.ts';
import type { Workload } from './ports.ts';
import { drawForId } from '../core/shares.ts';

/** An active or finished job as the service holds it in memory (mirrors its row). */
export interface ServiceJob {
  readonly id: number;
  readonly name: string;
  readonly className: string;
  /** Replaced when a replayed submission of a self-launched job hands out a new token (idempotency.ts). */
  tokenHash: string;
  state: JobState;
  readonly submittedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  planId: number | null;
  /** Widths per statistical epoch, from the current plan's share its draw picks (followPlan). */
  widths: number[] | null;
  /** In [0, 1), drawn once at submission: which share of each plan's mixture the job runs. */
  readonly draw: number;
  statEpoch: number;
  epochStartedAt: number | null;
  epochGeneration: number;
  /** The epoch's clock started at a report of its generation (its startup is not in it), not at allocation. */
  epochTimedFromReport: boolean;
  /** Work done in the current statistical epoch, in 1-GPU seconds, as the job last reported it. */
  workDoneSeconds: number;
  width: number;
  /** Node id per allocated GPU. */
  allocation: string[];
  generation: number;
  /** When boa moved the job to this generation (ms since the epoch); null: before migration 0011. */
  generationSince: number | null;
  /** Set each tick: the job has its widths but waits because the budget window allows no more GPUs. */
  queuedForBudget?: boolean;
  /**
   * Set each tick with queuedForBudget: its place in the queue for the budget (1 is served first as the
   * budget allows; a narrower job behind it may start first where only it fits), the queue's order.
   */
  budgetQueuePlace?: number;
  /**
   * Set each tick: the budget's ceiling gives it fewer GPUs than its plan (narrowed, or kept at the width
   * it runs at to spare a restart), so the API can say why a job runs narrower than its plan.
   */
  narrowedByBudget?: boolean;
  /**
   * Set each tick: GPUs it holds beyond its plan's width, lent by the idle fill (idle-fill.ts) on its
   * node; not booked as allocated (the node is paid anyway). Saved with its allocation (jobs.idle_fill_gpus),
   * so after a restart the job keeps them and the ledger still books its plan's width.
   */
  idleFillGpus: number;
  /**
   * Booked GPU-milliseconds up to `gpuMsSince`, the allocation held since adding to them (gpu-time.ts);
   * null: a job from before migration 0013, whose GPU-time was not kept.
   */
  gpuMs: number | null;
  gpuMsSince: number | null;
  /** What the executor runs; null for a self-launched job. */
  readonly workload: Workload | null;
  readonly tokenSeed: string | null;
  restarts: number;
  exitCode: number | null;
  failureReason: string | null;
  /** A failed executed job waits out its restart backoff until then (ms since the epoch; persisted). */
  restartNotBefore: number | null;
  /** Lease of a self-launched job: its last poll or report (ms since the epoch). */
  lastSeenAt: number | null;
  /** When its last progress report was taken (ms since the epoch); null: none yet. Not the lease. */
  lastReportAt: number | null;
}

export function jobFromRow(row: JobRow): ServiceJob {
  return {
    id: row.id,
    name: row.name,
    className: row.className,
    tokenHash: row.tokenHash,
    state: row.state as JobState,
    submittedAt: row.submittedAt,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    planId: row.planId,
    widths: row.widths ?? null,
    draw: row.draw ?? drawForId(row.id),
    statEpoch: row.statEpoch,
    epochStartedAt: row.epochStartedAt,
    epochGeneration: row.epochGeneration,
    epochTimedFromReport: row.epochTimedFromReport,
    workDoneSeconds: row.workDoneSeconds,
    width: row.width,
    allocation: row.allocation,
    generation: row.generation,
    generationSince: row.generationSince ?? null,
    idleFillGpus: row.idleFillGpus,
    gpuMs: row.gpuMs ?? null,
    gpuMsSince: row.gpuMsSince ?? null,
    workload: row.workload ?? null,
    tokenSeed: row.tokenSeed,
    restarts: row.restarts,
    exitCode: row.exitCode,
    failureReason: row.failureReason,
    restartNotBefore: row.restartNotBefore,
    lastSeenAt: row.lastSeenAt,
    lastReportAt: row.lastReportAt,
  };
}

/** The width a job's plan gives its current statistical epoch. */
export function plannedWidth(job: ServiceJob): number {
  if (!job.widths || job.widths.length === 0) return 0;
  return job.widths[Math.min(job.statEpoch, job.widths.length - 1)] as number;
}

/** GPUs per node of an allocation, as {node, gpus} pairs. */
export function nodesOf(allocation: readonly string[]): Array<{ node: string; gpus: number }> {
  const counts = new Map<string, number>();
  for (const node of allocation) counts.set(node, (counts.get(node) ?? 0) + 1);
  return [...counts].map(([node, gpus]) => ({ node, gpus }));
}
