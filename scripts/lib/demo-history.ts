/**
 * `demo --history`: other traces' submissions, placed as `compare --history` places them
 * (other-days.ts), imported into the demo's service before its replay, as an operator does with
 * `boa history import`.
 */
import type { bootService } from '../../src/service/boot.ts';
import type { HistoryArrival } from '../../src/sim/policies/boa/online-rates.ts';
import { parseList, UsageError } from './inputs.ts';
import { historyFrom } from './other-days.ts';
import { numberOption } from './sim-args.ts';

/** The history the flags give (none without --history), oldest first. */
export function demoHistory(
  opts: { history?: string; historyGapHours: string },
  trace: string,
  apps: readonly string[] | undefined,
): HistoryArrival[] {
  const gapHours = numberOption(opts.historyGapHours, '--history-gap-hours', { min: 0 });
  return opts.history ? historyFrom(parseList(opts.history, '--history'), trace, apps, gapHours) : [];
}

/** Imports the history through the service's API, its last arrival `secondsBefore` the service's start. */
export async function importDemoHistory(
  boa: Awaited<ReturnType<typeof bootService>>,
  history: readonly HistoryArrival[],
  start: number,
): Promise<void> {
  const arrivals = history.map((h) => ({
    className: h.app,
    submittedAt: Math.round(start - h.secondsBefore * 1000),
  }));
  const res = await boa.app.request('/v1/history', {
    method: 'POST',
    headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'demo --history', arrivals }),
  });
  const body = (await res.json()) as { leftOut?: number; error?: { message: string } };
  if (res.status !== 200) {
    await boa.close();
    throw new UsageError(`--history: the service refused it: ${body.error?.message ?? res.status}`);
  }
  process.stderr.write(
    `history: ${arrivals.length - (body.leftOut ?? 0)} arrivals imported` +
      `${body.leftOut ? `, ${body.leftOut} older than the estimator reads left out` : ''}\n`,
  );
}
