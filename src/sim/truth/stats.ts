/**
 * Statistical side of the ground truth: data-epoch boundaries in progress units and the gradient
 * statistics (grad_sqr, grad_var) at a total batch size during a data epoch.
 */
import { bracket } from './interp.ts';
import type { AppTables, ValidationTable } from './tables.ts';

export interface GradStats {
  readonly sqr: number;
  readonly var: number;
}

export interface StatsModel {
  /** Progress at the end of each data epoch (0-based index): the minimum over batch sizes (README). */
  readonly epochEnds: readonly number[];
  /** Gradient statistics at total batch `batch` during data epoch `epoch` (0-based). */
  gradStats(batch: number, epoch: number): GradStats;
  /** The data epoch (0-based) a job with this much progress is in; the last epoch once done. */
  epochAt(progress: number): number;
}

export function buildStatsModel(tables: AppTables, dataEpochs: number): StatsModel {
  const files: readonly ValidationTable[] = tables.validation;
  if (files.length === 0) throw new RangeError('no validation tables');
  if (!Number.isInteger(dataEpochs) || dataEpochs < 1)
    throw new RangeError(`bad data epoch count ${dataEpochs}`);
  for (const f of files) {
    if (f.rows.length < dataEpochs) {
      throw new RangeError(
        `validation-${f.batchSize}.csv has ${f.rows.length} rows, need ${dataEpochs} data epochs`,
      );
    }
  }
  const sizes = files.map((f) => f.batchSize);
  const epochEnds = Array.from({ length: dataEpochs }, (_, e) =>
    Math.min(...files.map((f) => (f.rows[e] as { progress: number }).progress)),
  );
  // Flat per-epoch arrays keep gradStats allocation-light: it runs in the batch search's inner loop.
  const sqr = Array.from({ length: dataEpochs }, (_, e) => files.map((f) => f.rows[e]?.gradSqr ?? 0));
  const vr = Array.from({ length: dataEpochs }, (_, e) => files.map((f) => f.rows[e]?.gradVar ?? 0));

  return {
    epochEnds,
    gradStats(batch, epoch) {
      const s = sqr[epoch];
      const v = vr[epoch];
      if (s === undefined || v === undefined) throw new RangeError(`no data epoch ${epoch}`);
      const { i, w } = bracket(sizes, batch);
      const s0 = s[i] as number;
      const v0 = v[i] as number;
      if (w === 0) return { sqr: s0, var: v0 };
      return { sqr: s0 + ((s[i + 1] as number) - s0) * w, var: v0 + ((v[i + 1] as number) - v0) * w };
    },
    epochAt(progress) {
      // Epoch e is finished once progress reaches its end; count finished epochs.
      let lo = 0;
      let hi = epochEnds.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((epochEnds[mid] as number) <= progress) lo = mid + 1;
        else hi = mid;
      }
      return Math.min(lo, epochEnds.length - 1);
    },
  };
}
