import type { budgetView } from '../../service/views.ts';
import { fixed, table } from '../format.ts';

type ClassSpend = ReturnType<typeof budgetView>['window']['allocatedByClass'][number];

/**
 * Where the window's allocated GPU-hours went, by class (`boa budget get`): a team asking "who spent
 * the budget" reads it here, not by adding up `jobs list`. Nothing while nothing was allocated.
 */
export function renderClassSpend(
  rows: readonly ClassSpend[],
  window: { hours: number; windowHours: number },
): string {
  if (rows.length === 0) return '';
  const cells = rows.map((r) => [
    r.className ?? '(before classes were kept)',
    // Hundredths: a young ledger's 0.04 GPU-hours read 0.0 beside a 52% share (a trial).
    fixed(r.gpuHours, 2),
    fixed(r.gpuHoursPerHour),
    `${fixed(100 * r.share, 0)}%`,
  ]);
  // Over the span the rows cover: the window, or the ledger's hours while it is younger.
  const span =
    window.hours < window.windowHours - 1e-6
      ? `allocated in the ${fixed(window.hours, 1)} h on record`
      : `allocated in the last ${window.windowHours} h`;
  // One blank line after the averages' table (which ends its last row with a newline), as before `ceiling`.
  return `\n${table([span, 'GPU-hours', 'GPU-h/h', 'share'], cells)}`;
}
