/**
 * Stage-grained profiles (forward, backward, communication per iteration) per class, GPU type and width:
 * what a profiler would measure at the job's start (first data epoch, its best batch), derived from the
 * measured t4 tables and scaled per type by hardware.ts. data/stage-profiles.json is this, written by
 * `npm run -s stage-profiles`; policies get it through PolicyContext.hardware.
 */
import { GPU_TYPES, type GpuType } from '../gpu-types.ts';
import type { HardwareView, StageTimes } from '../policy.ts';
import type { AppName } from './apps.ts';
import { FORWARD_SHARE, type StepSplit, stepSplitOn, stepSplitT4 } from './hardware.ts';
import type { JobTruth } from './model.ts';
import { packedPlacement } from './placement.ts';

/** t4 step split at `width` packed, first data epoch, best batch; undefined when no batch fits. */
export function referenceSplit(
  truth: JobTruth,
  width: number,
  gpusPerNode: number,
): (StepSplit & { totalBatch: number; accumSteps: number }) | undefined {
  const placement = packedPlacement(width, gpusPerNode);
  const best = truth.bestConfigInEpoch(placement, 0);
  if (best === undefined) return undefined;
  return { ...stepSplitT4(truth, placement, best), totalBatch: best.totalBatch, accumSteps: best.accum };
}

export function stageTimes(
  truth: JobTruth,
  app: string,
  type: GpuType,
  width: number,
  gpusPerNode: number,
): StageTimes | undefined {
  const split = referenceSplit(truth, width, gpusPerNode);
  if (split === undefined) return undefined;
  const on = stepSplitOn(app, type, packedPlacement(width, gpusPerNode), split);
  const forwardShare = FORWARD_SHARE[app as AppName] ?? 1 / 3;
  const ms = (s: number) => Number((s * 1000).toPrecision(5));
  return {
    forwardMs: ms(on.compute * forwardShare),
    backwardMs: ms(on.compute * (1 - forwardShare)),
    commMs: ms(on.comm),
    totalBatch: split.totalBatch,
    accumSteps: split.accumSteps,
  };
}

export class HardwareError extends Error {
  override name = 'HardwareError';
}

/** The policies' view: stage profiles memoised per (app, type, width), widths narrowed to one that fits. */
export function hardwareView(
  truthOf: (app: string) => JobTruth,
  types: readonly GpuType[],
  gpusPerNode: number,
): HardwareView {
  const cache = new Map<string, StageTimes>();
  const stages = (app: string, type: GpuType, width: number): StageTimes => {
    if (!Number.isInteger(width) || width < 1)
      throw new HardwareError(`a width must be a positive integer, got ${width}`);
    if (!GPU_TYPES.includes(type))
      throw new HardwareError(`unknown GPU type "${type}"; allowed: ${GPU_TYPES.join(', ')}`);
    const key = `${app}/${type}/${width}`;
    let found = cache.get(key);
    if (found === undefined) {
      const truth = truthOf(app);
      for (let w = width; w >= 1 && found === undefined; w--)
        found = stageTimes(truth, app, type, w, gpusPerNode);
      if (found === undefined) throw new HardwareError(`${app} has no batch size that fits ${width} GPUs`);
      cache.set(key, found);
    }
    return found;
  };
  const total = (s: StageTimes) => s.forwardMs + s.backwardMs + s.commMs;
  const speedFactor = (app: string, type: GpuType, width: number) =>
    total(stages(app, 't4', width)) / total(stages(app, type, width));
  return { types, stages, speedFactor };
}

/** Widths data/stage-profiles.json lists per class and type (packed 4 per node). */
export const STAGE_PROFILE_WIDTHS: readonly number[] = [1, 2, 4, 8, 16];

export interface StageProfileFile {
  readonly source: string;
  /** widths -> stage times, per class and GPU type; a width no batch fits is left out. */
  readonly classes: Record<string, Record<string, Record<string, StageTimes>>>;
}

/** The whole stage-profile table for `apps`, every GPU type, at STAGE_PROFILE_WIDTHS. */
export function stageProfileFile(
  apps: readonly string[],
  truthOf: (app: string) => JobTruth,
  gpusPerNode = 4,
): StageProfileFile {
  const classes: StageProfileFile['classes'] = {};
  for (const app of apps) {
    const truth = truthOf(app);
    const byType: Record<string, Record<string, StageTimes>> = {};
    for (const type of GPU_TYPES) {
      const byWidth: Record<string, StageTimes> = {};
      for (const width of STAGE_PROFILE_WIDTHS) {
        const times = stageTimes(truth, app, type, width, gpusPerNode);
        if (times !== undefined) byWidth[String(width)] = times;
      }
      byType[type] = byWidth;
    }
    classes[app] = byType;
  }
  return {
    source:
      'derived by `npm run -s stage-profiles` from data/pollux (t4, measured) scaled per GPU type by src/sim/truth/hardware.ts; sources in data/README.md',
    classes,
  };
}
