/**
 * Filling toward the budget (opt-in): while the budget window has paid more than `band` under what its
 * budget promised and no job waits for the budget, the running jobs take the budget's GPUs by the drain's rule
 * (drain-widths.ts), with no floor on what a GPU must add (a step must still gain 1.1x, and the job
 * have 20 restarts' worth of work left).
 *
 * Why: at a budget its load does not need, BOA's widths leave part of it unspent whenever few jobs are
 * present, and the drain hands that over only once submissions have stopped. A budget that is lost if
 * unspent (a commitment, a reservation) should be spent: the demo at 40 on workload-1 paid 3.5% under.
 * Why opt-in: the GPUs it adds buy little, and the budget it spends in a lull is the room the spend
 * ceiling lends the next burst (slower at matched paid on the bursty traces, docs/comparison.md).
 * Why not before `afterHours`: early on online rates read the load low and the window is short, so it
 * is under the band while the load is still coming; filling then widened jobs the load later queued
 * behind (workload-1 at its minimum budget: 1411 -> 2131 s average JCT from 1 hour, 1396 s from 6).
 */
import { DEFAULT_DRAIN, type DrainOptions } from './drain-widths.ts';

export interface BandFillOptions {
  /** The window paid more than this share under its budget starts the fill (0: never). */
  readonly band: number;
  /** Not before the window has counted this many hours. */
  readonly afterHours: number;
}

/** The hours the window must have counted (measured: docs/comparison.md). */
export const BAND_FILL_AFTER_HOURS = 6;

/** The drain's rule as the fill uses it: any GPU that shortens a job is worth the budget it spends. */
export const BAND_FILL_DRAIN: DrainOptions = { ...DEFAULT_DRAIN, minMarginalSpeedup: 0 };

/** The window so far, as the spend ceiling counts it (core/spend-ceiling.ts). */
export interface WindowSoFar {
  /** GPU-hours paid above what the budget promised (negative: under). */
  readonly debtGpuHours: number;
  /** GPU-hours the budget promised over those hours (each budget in force for its hours). */
  readonly promisedGpuHours: number;
  /** The hours that debt is counted over. */
  readonly debtHours: number;
}

/**
 * Whether the window so far paid more than the band under what the budget promised over it: against the
 * promise, not the budget now, so a day after a budget change is judged as the ledger judges it.
 */
export function windowBelowBand(window: WindowSoFar, options: BandFillOptions): boolean {
  if (!(options.band > 0) || !(window.promisedGpuHours > 0) || window.debtHours < options.afterHours)
    return false;
  return -window.debtGpuHours > options.band * window.promisedGpuHours;
}

/**
 * Options for a band from a config or a command line; the message names what is allowed.
 * `lookbackHours`: the most the ceiling counts its debt over (a window shorter than 7 hours gates the
 * fill on all of it, not on 6 hours it never reaches).
 */
export function bandFillOptions(band: number, lookbackHours = Number.POSITIVE_INFINITY): BandFillOptions {
  if (!(Number.isFinite(band) && band >= 0 && band < 1)) {
    throw new RangeError(`the band must be a share of the budget from 0 (never) to below 1, got ${band}`);
  }
  return { band, afterHours: Math.min(BAND_FILL_AFTER_HOURS, lookbackHours) };
}
