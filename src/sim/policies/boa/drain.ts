/**
 * The service's drain (core/exec/drain-widths.ts, src/service/drain.ts) in the simulator: once no job
 * has arrived for `afterHours` and every job runs at its planned width, the running jobs take the GPUs
 * the budget allows, whole nodes within the budget and the ceiling. The same, with no floor on what a
 * GPU adds, while the window is under the budget's band (the opt-in fill, core/exec/band-fill.ts).
 */
import { type DrainOptions, drainWidths } from '../../../core/exec/drain-widths.ts';
import { BAND_FILL_DRAIN } from '../../../core/exec/band-fill.ts';
import type { ClassProfile } from '../../../core/profile.ts';
import type { ClusterView, JobView } from '../../policy.ts';

interface Wanted {
  readonly id: number;
  readonly state: string;
  readonly width: number;
  readonly provision: number;
  readonly current: readonly number[];
}

export interface DrainInput<W extends Wanted> {
  readonly options: DrainOptions | null;
  /** Seconds since the last arrival (0 before any). */
  readonly quietSeconds: number;
  /** The window is under the budget's band (band-fill.ts): the drain's rule applies before the drain. */
  readonly belowBand: boolean;
  readonly budget: number;
  readonly ceilingGpus: number | undefined;
  readonly cluster: ClusterView;
  /** The widths the ceiling allows, and the plan's: the drain needs every job served at its plan. */
  readonly served: readonly W[];
  readonly planned: readonly W[];
  readonly jobs: readonly JobView[];
  readonly classes: ReadonlyMap<string, ClassProfile>;
  /**
   * GPUs each job holds within its plan's width (the policy's `held`): the idle fill's lent GPUs beyond
   * it are not the drain's, so a job lent them is not booked for them, and keeps them (not its drained
   * width) when the drain ends. Absent: its allocation.
   */
  readonly held?: ReadonlyMap<number, number>;
}

/**
 * `served` with the drain's widths when it applies; `extraGpus` is what it adds to the plan's widths
 * (booked as expected, so the demand ratio does not narrow the plan for them).
 */
export function drainedWidths<W extends Wanted>(
  input: DrainInput<W>,
): { wanted: readonly W[]; extraGpus: number } {
  const { served, planned, cluster } = input;
  const unchanged = { wanted: served, extraGpus: 0 };
  const draining = input.options !== null && input.quietSeconds >= input.options.afterHours * 3600;
  if (!draining && !input.belowBand) return unchanged;
  // Both at once: the fill's rule, which hands out what the drain's floor would leave unspent.
  const options = input.belowBand ? BAND_FILL_DRAIN : (input.options as DrainOptions);
  if (served.length !== planned.length || served.some((w, i) => w.width !== planned[i]?.width))
    return unchanged;
  // A job waiting to start ends the drain; the fill makes room for it at its plan's width and keeps
  // what it handed out while everything fits (src/service/drain.ts).
  if (!input.belowBand && served.some((w) => w.state !== 'running')) return unchanged;
  const allowed = Math.min(
    input.budget,
    input.ceilingGpus ?? Number.POSITIVE_INFINITY,
    cluster.maxNodes * cluster.gpusPerNode,
  );
  const gpus = Math.floor(allowed / cluster.gpusPerNode + 1e-9) * cluster.gpusPerNode;
  const byId = new Map(input.jobs.map((job) => [job.id, job]));
  const widths = drainWidths(
    served.map((w) => {
      const job = byId.get(w.id) as JobView;
      return {
        id: w.id,
        app: job.app,
        statEpoch: job.statEpoch,
        progressFraction: job.progressFraction,
        width: Math.max(w.width, input.held?.get(w.id) ?? w.current.length),
        restarting: job.restartingUntil !== null && job.restartingUntil > cluster.now,
      };
    }),
    input.classes,
    gpus,
    options,
  );
  if (widths === undefined) return unchanged;
  let extraGpus = 0;
  const wanted = served.map((w) => {
    const width = widths.get(w.id) ?? w.width;
    extraGpus += width - w.width;
    return width === w.width ? w : { ...w, width, provision: width };
  });
  return { wanted, extraGpus };
}
