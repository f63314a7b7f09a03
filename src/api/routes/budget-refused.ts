import type { Context } from 'hono';
import type { ZodError } from 'zod';
import { budgetAllowed } from '../../service/budget.ts';
import { ServiceError } from '../../service/errors.ts';
import type { ApiEnv } from '../env.ts';
import { validationProblem } from '../errors.ts';

/**
 * A refused budget value (0, -5, "abc", null) says what a budget must be, with the smallest accepted
 * one, as a budget below it (422) does: "must be > 0" alone read as if 0.5 were accepted (a newcomer
 * trial). Missing, infinite or too big, and other fields, are said as every route says them.
 */
export function budgetRefused(
  result: { success: true } | { success: false; error: ZodError; data?: unknown },
  c: Context<ApiEnv>,
): undefined {
  if (result.success) return;
  // Thrown, not returned: the route's typed answers leave no room for a hook's (handleError says it).
  const { issue, field, message } = validationProblem(result.error);
  // The body as sent (zod-validator hands it to the hook, which its types leave out on a failure).
  const value = (result.data as { gpuHoursPerHour?: unknown } | null)?.gpuHoursPerHour;
  const refused =
    field === 'gpuHoursPerHour' &&
    (issue?.code === 'too_small' ||
      (issue?.code === 'invalid_type' && value !== undefined && typeof value !== 'number'));
  if (!refused) throw new ServiceError(400, 'invalid', message, field);
  const allowed = budgetAllowed(c.var.service);
  // Cut as the 415's echo is: a 50 KB string came back whole in the error (found in review).
  const sent = JSON.stringify(value) ?? String(value);
  const shown = sent.length > 100 ? `${sent.slice(0, 100)}...` : sent;
  const kind = Array.isArray(value)
    ? 'an array'
    : typeof value === 'object'
      ? 'an object'
      : `a ${typeof value}`;
  const got =
    typeof value === 'number'
      ? `got ${value}; to stop spending, cancel the jobs`
      : `got ${shown}${value === null ? '' : `, ${kind}`}`;
  throw new ServiceError(400, 'invalid', `gpuHoursPerHour must be ${allowed.says}, ${got}`, field, {
    minFeasibleBudget: allowed.leastPaid,
  });
}
