import type { ServiceJob } from './jobs.ts';

/** Which of the queue to list: a class, a name (GET /v1/jobs's filters). */
export interface QueueFilter {
  readonly className?: string | undefined;
  readonly name?: string | undefined;
}

/**
 * The jobs queued for the budget at the last tick, in the order they start as the budget allows
 * (budgetQueuePlace, budget-widths.ts), the first `limit`: a list by submission read as the queue, and
 * under the default order (least work left first) the job at its top could wait for hours.
 */
export function budgetQueue(
  jobs: Iterable<ServiceJob>,
  limit: number,
  filter: QueueFilter = {},
): ServiceJob[] {
  const queued: ServiceJob[] = [];
  for (const job of jobs) {
    if (job.state !== 'waiting' || !job.queuedForBudget || job.budgetQueuePlace === undefined) continue;
    if (filter.className !== undefined && job.className !== filter.className) continue;
    if (filter.name !== undefined && job.name !== filter.name) continue;
    queued.push(job);
  }
  queued.sort((a, b) => (a.budgetQueuePlace as number) - (b.budgetQueuePlace as number));
  return queued.slice(0, limit);
}
