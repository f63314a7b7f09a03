import { ServiceError } from '../service/errors.ts';
import type { JobState } from '../store/repository.ts';

/** GET /v1/jobs's filters as the query gives them (each checked alone by its schema, ListJobsQuery). */
export interface ListJobsFilters {
  readonly state?: string | undefined;
  readonly order?: 'submitted' | 'ended' | 'queue' | undefined;
  readonly before?: number | undefined;
  readonly stopping?: 'true' | undefined;
}

/** The states GET /v1/jobs lists, once its filters are checked together: a 400 names a pair that cannot go. */
export function listedStates({ state, order, before, stopping }: ListJobsFilters): JobState[] | undefined {
  if (stopping && order !== undefined && order !== 'submitted')
    throw new ServiceError(
      400,
      'invalid',
      `stopping=true lists the jobs whose replicas still stop as they were submitted; it cannot be given with order=${order}`,
      'order',
    );
  // Pages are of ids; listed by end, a page by id would skip jobs (found in review).
  if (before !== undefined && order !== undefined && order !== 'submitted')
    throw new ServiceError(
      400,
      'invalid',
      `before pages the jobs in the order they were submitted; it cannot be given with order=${order} (${order === 'ended' ? 'the limit newest ended' : "the queue's first limit"} is one page)`,
      'before',
    );
  const states = state?.split(',') as JobState[] | undefined;
  if (order === 'queue' && states !== undefined && !states.includes('waiting'))
    throw new ServiceError(
      400,
      'invalid',
      `order=queue lists waiting jobs (those queued for the budget); state must include waiting or be left out, got "${state}"`,
      'state',
    );
  return states;
}
