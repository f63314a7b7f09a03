/** The simulator's drain and fill (src/sim/policies/boa/drain.ts): what a waiting job does to them. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_DRAIN } from '../../../../src/core/exec/drain-widths.ts';
import type { ClusterView, JobView } from '../../../../src/sim/policy.ts';
import { drainedWidths } from '../../../../src/sim/policies/boa/drain.ts';
import { oneEpochClass } from '../../../core/exec/one-epoch.ts';

// Nearly linear to 16 GPUs: every step the fill could take is worth a restart.
const scales = oneEpochClass('scales', { 1: 1, 2: 1.95, 4: 3.8, 8: 7.2, 16: 13 });
const classes = new Map([['scales', scales]]);
const cluster: ClusterView = { now: 0, gpusPerNode: 4, mode: 'autoscaled', nodes: [], maxNodes: 16 };
const view = (id: number, running: number): JobView =>
  ({
    id,
    app: 'scales',
    statEpoch: 0,
    progressFraction: 0,
    restartingUntil: null,
    allocation: new Array(running).fill(0),
  }) as unknown as JobView;
// Job 1 runs on the 8 GPUs the fill gave it (its plan: 2); job 2 has just arrived (its plan: 2).
const wanted = (id: number, width: number, current: number) => ({
  id,
  state: current > 0 ? 'running' : 'waiting',
  width,
  provision: width,
  current: new Array<number>(current).fill(0),
});
const served = [wanted(1, 2, 8), wanted(2, 2, 0)];
const input = (budget: number, belowBand: boolean) => ({
  options: DEFAULT_DRAIN,
  quietSeconds: 60,
  belowBand,
  budget,
  ceilingGpus: 100,
  cluster,
  served,
  planned: served,
  jobs: [view(1, 8), view(2, 0)],
  classes,
});

describe('the fill and a new job', () => {
  it('makes room for it at its plan width and keeps what the running job was given, while both fit', () => {
    const { wanted: out } = drainedWidths(input(16, true));
    const widths = new Map(out.map((w) => [w.id, w.width]));
    expect(widths.get(1)).toBeGreaterThanOrEqual(8);
    expect(widths.get(2)).toBeGreaterThanOrEqual(2);
    expect((widths.get(1) as number) + (widths.get(2) as number)).toBeLessThanOrEqual(16);
  });

  it('leaves every job at its plan when they do not fit the budget together, and the drain to the plan', () => {
    expect(drainedWidths(input(8, true)).wanted).toBe(served);
    // Not under the band: a job waiting to start ends the drain (2 hours quiet do not apply here anyway).
    expect(drainedWidths({ ...input(16, false), quietSeconds: 3 * 3600 }).wanted).toBe(served);
  });
});

describe('the drain and GPUs the idle fill lent', () => {
  // Job 1's plan is 2 GPUs; it runs on 8, the idle fill lent it 6 (held: the 2 within its plan).
  // Past 2 GPUs its class gains too little for the drain: only the fill lends it more.
  const tops = oneEpochClass('tops', { 1: 1, 2: 1.9, 4: 1.95, 8: 2 });
  const lent = {
    ...input(16, false),
    quietSeconds: 3 * 3600,
    served: [wanted(1, 2, 8)],
    planned: [wanted(1, 2, 8)],
    jobs: [{ ...view(1, 8), app: 'tops' } as JobView],
    classes: new Map([['tops', tops]]),
  };

  it('are not the drain width: not booked, and kept by the fill, not by the drain, when it ends', () => {
    const drained = drainedWidths({ ...lent, held: new Map([[1, 2]]) });
    expect(drained.wanted.map((w) => w.width)).toEqual([2]);
    expect(drained.extraGpus).toBe(0);
    // Without `held` (before 2026-12-02) the drain took them for its own: 6 GPUs booked.
    const before = drainedWidths(lent);
    expect(before.wanted.map((w) => w.width)).toEqual([8]);
    expect(before.extraGpus).toBe(6);
  });
});
