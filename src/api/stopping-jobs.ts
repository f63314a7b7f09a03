/**
 * GET /v1/jobs?stopping=true: the jobs whose replicas boa stops still run within their grace, holding
 * their GPUs. Most have ended (cancelled, done, failed): neither the active jobs nor the latest to end
 * list each of them (a cancel of many, or a replica stuck stopping while others end after it), so the
 * dashboard showed GPUs paid and held with no job to explain them (found in review).
 */
import type { ServiceJob } from '../service/jobs.ts';
import { jobFromRow } from '../service/jobs.ts';
import type { JobRow, JobState } from '../store/repository.ts';

export interface StoppingFilter {
  readonly states: readonly JobState[] | undefined;
  readonly className: string | undefined;
  readonly name: string | undefined;
  readonly beforeId: number | undefined;
}

/**
 * The newest `limit` of the jobs `stopping` names (a handful: each has a replica still running), oldest
 * first as the list by submission is; each as the service holds it, else as stored.
 */
export function stoppingJobs(
  stopping: ReadonlyMap<number, unknown> | undefined,
  active: ReadonlyMap<number, ServiceJob>,
  getJob: (id: number) => JobRow | undefined,
  limit: number,
  filter: StoppingFilter,
): ServiceJob[] {
  const jobs: ServiceJob[] = [];
  for (const id of [...(stopping?.keys() ?? [])].sort((a, b) => a - b)) {
    if (filter.beforeId !== undefined && id >= filter.beforeId) continue;
    const row = active.has(id) ? undefined : getJob(id);
    const job = active.get(id) ?? (row && jobFromRow(row));
    if (!job) continue;
    if (filter.states && !filter.states.includes(job.state)) continue;
    if (filter.className !== undefined && job.className !== filter.className) continue;
    if (filter.name !== undefined && job.name !== filter.name) continue;
    jobs.push(job);
  }
  return jobs.slice(-limit);
}
