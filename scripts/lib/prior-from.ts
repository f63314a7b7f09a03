/**
 * `compare --prior-from`: boa's estimator starting from what a service that ran on other days knows,
 * the average arrival rate of each class over other traces (the service's `priorRates`). Never the
 * trace being compared: that would be its own rates, oracle input.
 */
import { resolve } from 'node:path';
import { arrivalRatesPerHour } from '../../src/core/trace.ts';
import type { CompareEntry } from './compare-report.ts';
import { loadTrace, UsageError } from './inputs.ts';

/** Jobs/hour per class, averaged over the files (a class a file lacks counts 0 there); only `apps` if given. */
export function priorFrom(
  files: readonly string[],
  trace: string,
  apps?: readonly string[],
): Record<string, number> {
  if (files.length === 0) throw new UsageError('--prior-from needs at least one trace file');
  if (files.some((f) => resolve(f) === resolve(trace))) {
    throw new UsageError(
      `--prior-from must not include --trace ${trace}: its own rates are oracle input (boa@oracle, --rates prior)`,
    );
  }
  const rates = files.map((file) => arrivalRatesPerHour(loadTrace(file)));
  const classes = apps ?? [...new Set(rates.flatMap((r) => Object.keys(r)))].sort();
  return Object.fromEntries(
    classes.map((c) => [c, rates.reduce((sum, r) => sum + (r[c] ?? 0), 0) / files.length]),
  );
}

/** boa's entries (not its oracle ones) given the prior, and labelled with where it came from. */
export function withPrior(
  entries: readonly CompareEntry[],
  prior: Readonly<Record<string, number>>,
  files: number,
): CompareEntry[] {
  const from = `prior from ${files} other trace${files === 1 ? '' : 's'}`;
  return entries.map((entry) => {
    if (entry.definition.name !== 'boa' || entry.options?.rates === 'oracle') return entry;
    const label = entry.label ? entry.label.replace(/\)$/, `, ${from})`) : `boa (${from})`;
    return { ...entry, options: { ...entry.options, priorRatesPerHour: prior }, label };
  });
}
