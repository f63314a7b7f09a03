/**
 * The ground-truth performance of one application at any placement and progress: what Pollux simulated,
 * and what our simulator uses for job progress. Results are memoised per (placement site, data epoch),
 * since goodput is constant inside a data epoch for a given placement.
 */
import type { AppSpec } from './apps.ts';
import { type BatchConfig, bestBatchConfig } from './goodput.ts';
import { numReplicas, type Placement } from './placement.ts';
import { buildStatsModel } from './stats.ts';
import type { AppTables } from './tables.ts';
import { buildThroughputModel, type StepTimes } from './throughput.ts';

export interface JobTruth {
  readonly spec: AppSpec;
  /** Progress at the end of each data epoch (0-based); the job is done at the last one. */
  readonly epochEnds: readonly number[];
  /** Progress needed to finish the job (end of its last data epoch). */
  readonly totalProgress: number;
  /** Data epoch (0-based) at this progress; the last epoch once done. */
  dataEpochAt(progress: number): number;
  /** Step and sync time at a placement and per-GPU batch size. */
  stepTimes(placement: Placement, atomicBsz: number): StepTimes;
  /** Best batch configuration during a data epoch; undefined when no batch fits (too many GPUs). */
  bestConfigInEpoch(placement: Placement, epoch: number): BatchConfig | undefined;
  /** Best batch configuration at a statistical progress value (iterations at B0). */
  bestConfig(placement: Placement, progress: number): BatchConfig | undefined;
}

interface Site {
  readonly step: Float64Array;
  readonly sync: Float64Array;
  readonly byEpoch: Map<number, BatchConfig | undefined>;
}

export function createJobTruth(tables: AppTables, spec: AppSpec): JobTruth {
  const throughput = buildThroughputModel(tables);
  const stats = buildStatsModel(tables, spec.dataEpochs);
  const sites = new Map<string, Site>();

  // Step times for every atomic batch size the search can try at this site, computed once.
  const siteOf = (placement: Placement): Site => {
    const id = throughput.siteId(placement);
    let site = sites.get(id);
    if (site === undefined) {
      const hi = Math.min(spec.maxLocalBsz, Math.floor(spec.maxBatch / numReplicas(placement)));
      const n = Math.max(0, hi - spec.minLocalBsz + 1);
      const step = new Float64Array(n);
      const sync = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const t = throughput.at(placement, spec.minLocalBsz + i);
        step[i] = t.stepTime;
        sync[i] = t.syncTime;
      }
      site = { step, sync, byEpoch: new Map() };
      sites.set(id, site);
    }
    return site;
  };

  const bestConfigInEpoch = (placement: Placement, epoch: number): BatchConfig | undefined => {
    if (!Number.isInteger(epoch) || epoch < 0 || epoch >= spec.dataEpochs) {
      throw new RangeError(`${spec.name} has data epochs 0..${spec.dataEpochs - 1}, got ${epoch}`);
    }
    const site = siteOf(placement);
    if (site.byEpoch.has(epoch)) return site.byEpoch.get(epoch);
    const base = spec.minLocalBsz;
    const best = bestBatchConfig(
      spec,
      numReplicas(placement),
      (atomic) => ({
        stepTime: site.step[atomic - base] as number,
        syncTime: site.sync[atomic - base] as number,
      }),
      (batch) => stats.gradStats(batch, epoch),
    );
    site.byEpoch.set(epoch, best);
    return best;
  };

  const totalProgress = stats.epochEnds[stats.epochEnds.length - 1] as number;
  return {
    spec,
    epochEnds: stats.epochEnds,
    totalProgress,
    dataEpochAt: (progress) => stats.epochAt(progress),
    stepTimes: (placement, atomicBsz) => throughput.at(placement, atomicBsz),
    bestConfigInEpoch,
    bestConfig: (placement, progress) => bestConfigInEpoch(placement, stats.epochAt(progress)),
  };
}
