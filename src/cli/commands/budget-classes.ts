import type { budgetView } from '../../service/views.ts';
import { fixed, table } from '../format.ts';

type ClassSpend = ReturnType<typeof budgetView>['window']['allocatedByClass'][number];

/**
 * Where the window's allocated GPU-hours went, by class (`boa budget get`): a team asking "who spent
 * the budget" reads it here, not by adding up `jobs list`. Nothing while nothing was allocated.
 */
export function renderClassSpend(rows: readonly ClassSpend[], windowHours: number): string {
  if (rows.length === 0) return '';
  const cells = rows.map((r) => [
    r.className ?? '(before classes were kept)',
    fixed(r.gpuHours, 1),
    fixed(r.gpuHoursPerHour),
    `${fixed(100 * r.share, 0)}%`,
  ]);
  return `\n\n${table([`allocated in the last ${windowHours} h`, 'GPU-hours', 'GPU-h/h', 'share'], cells)}`;
}
