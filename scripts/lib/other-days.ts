/**
 * What a service that ran on other days knows, for boa's online estimator in `compare`: `--prior-from`,
 * the average arrival rate of each class over other traces (the service's `priorRates`), and
 * `--history`, those traces' submissions themselves, as the service's rate window holds them after
 * running through those days. Never the trace being compared: that would be its own arrivals, oracle
 * input.
 */
import { resolve } from 'node:path';
import { arrivalRatesPerHour, type TraceJob } from '../../src/core/trace.ts';
import type { PolicyOptions } from '../../src/sim/policy.ts';
import type { HistoryArrival } from '../../src/sim/policies/boa/online-rates.ts';
import type { CompareEntry } from './compare-report.ts';
import { loadTrace, UsageError } from './inputs.ts';

/** Between one day's last submission and the next day's first (and the trace's), at the least. */
export const HISTORY_GAP_SECONDS = 60;

function otherTraces(files: readonly string[], trace: string, flag: string): TraceJob[][] {
  if (files.length === 0) throw new UsageError(`${flag} needs at least one trace file`);
  if (files.some((f) => resolve(f) === resolve(trace))) {
    throw new UsageError(
      `${flag} must not include --trace ${trace}: its own rates are oracle input (boa@oracle, --rates prior)`,
    );
  }
  return files.map((file) => loadTrace(file));
}

/** Jobs/hour per class, averaged over the files (a class a file lacks counts 0 there); only `apps` if given. */
export function priorFrom(
  files: readonly string[],
  trace: string,
  apps?: readonly string[],
): Record<string, number> {
  const rates = otherTraces(files, trace, '--prior-from').map((jobs) => arrivalRatesPerHour(jobs));
  const classes = apps ?? [...new Set(rates.flatMap((r) => Object.keys(r)))].sort();
  return Object.fromEntries(
    classes.map((c) => [c, rates.reduce((sum, r) => sum + (r[c] ?? 0), 0) / files.length]),
  );
}

/**
 * The files' submissions back to back in the order given, each file's span as it is, `gapHours` of
 * no submissions (at least a minute) between files and before the trace's first arrival (16 after
 * 8-hour traces: a working day each day); oldest first, only `apps` if given.
 */
export function historyFrom(
  files: readonly string[],
  trace: string,
  apps?: readonly string[],
  gapHours = 0,
): HistoryArrival[] {
  const gap = Math.max(HISTORY_GAP_SECONDS, gapHours * 3600);
  const days = otherTraces(files, trace, '--history');
  const keep = apps ? new Set(apps) : undefined;
  const history: HistoryArrival[] = [];
  let before = 0; // seconds from the end of this day to the trace's first arrival
  for (const jobs of days.reverse()) {
    const last = (jobs[jobs.length - 1] as TraceJob).time;
    before += gap;
    for (const job of jobs) {
      if (!keep || keep.has(job.application))
        history.push({ app: job.application, secondsBefore: before + last - job.time });
    }
    before += last - (jobs[0] as TraceJob).time;
  }
  return history.sort((a, b) => b.secondsBefore - a.secondsBefore);
}

/** boa's entries (not its oracle ones) given the prior, and labelled with where it came from. */
export function withPrior(
  entries: readonly CompareEntry[],
  prior: Readonly<Record<string, number>>,
  files: number,
): CompareEntry[] {
  return withOnlineBoa(entries, { priorRatesPerHour: prior }, `prior from ${traces(files)}`);
}

/** boa's entries (not its oracle ones) given the history, and labelled with it. */
export function withHistory(
  entries: readonly CompareEntry[],
  history: readonly HistoryArrival[],
  files: number,
  gapHours = 0,
): CompareEntry[] {
  const apart = gapHours > 0 ? `, ${gapHours} h apart` : '';
  return withOnlineBoa(entries, { history }, `history of ${traces(files)}${apart}`);
}

function traces(files: number): string {
  return `${files} other trace${files === 1 ? '' : 's'}`;
}

function withOnlineBoa(
  entries: readonly CompareEntry[],
  options: PolicyOptions,
  says: string,
): CompareEntry[] {
  return entries.map((entry) => {
    if (entry.definition.name !== 'boa' || entry.options?.rates === 'oracle') return entry;
    const label = entry.label ? entry.label.replace(/\)$/, `, ${says})`) : `boa (${says})`;
    return { ...entry, options: { ...entry.options, ...options }, label };
  });
}
