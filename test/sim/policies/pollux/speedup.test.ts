import { describe, expect, it } from 'vitest';
import { planWidths } from '../../../../src/sim/policies/pollux/optimize.ts';
import {
  buildJobCurve,
  candidateWidths,
  explorationCap,
  fairShareGoodput,
  GoodputTable,
} from '../../../../src/sim/policies/pollux/speedup.ts';
import { fakeOracle, flat, jobView, linear } from './fakes.ts';

describe('candidateWidths and explorationCap', () => {
  it('lists every width up to 16, then whole 4-GPU nodes', () => {
    expect(candidateWidths(6, 4)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(candidateWidths(30, 4)).toEqual([...Array.from({ length: 16 }, (_, i) => i + 1), 20, 24, 28]);
  });

  it('caps a job at twice its widest run, at least 1, at most 64', () => {
    expect(explorationCap(0)).toBe(1);
    expect(explorationCap(3)).toBe(6);
    expect(explorationCap(40)).toBe(64);
  });
});

describe('buildJobCurve', () => {
  it('keeps only widths that raise the (penalised) goodput, and the current allocation unpenalised', () => {
    // One node: 1, 1.8, 2.4, 3 for 1..4 GPUs; across nodes the network costs: 0.6 per GPU.
    const goodput = (g: number, n: number) => (n > 1 ? 0.6 * g : ([0, 1, 1.8, 2.4, 3][g] as number));
    const table = new GoodputTable(fakeOracle({ 7: goodput }), 4);
    const job = jobView(7, { allocation: [2, 2], rescales: 1 });
    const curve = buildJobCurve(job, table, 8, 0.5);
    // Penalised: 0.5, 0.9, 1.2, 1.5, 1.5, 1.8, 2.1, 2.4 for 1..8; staying on 2 GPUs: 1.8. So 2..6 GPUs
    // moved are never better than staying, and 7 and 8 are.
    expect(curve.options.map((o) => [o.width, o.keep, o.effective])).toEqual([
      [1, false, 0.5],
      [2, true, 1.8],
      [7, false, expect.closeTo(2.1, 12)],
      [8, false, expect.closeTo(2.4, 12)],
    ]);
    expect(curve.oneGpuGoodput).toBe(1);
  });

  it('penalises every option but staying put by the restart factor', () => {
    const table = new GoodputTable(fakeOracle({ 1: linear }), 4);
    const curve = buildJobCurve(jobView(1), table, 4, 0.25);
    expect(curve.options.map((o) => o.effective)).toEqual([0.25, 0.5, 0.75, 1]);
    expect(curve.options.every((o) => !o.keep)).toBe(true);
  });

  it('still offers one GPU when no width gains anything (restart factor 0)', () => {
    const table = new GoodputTable(fakeOracle({ 1: flat }), 4);
    const curve = buildJobCurve(jobView(1), table, 16, 0);
    expect(curve.options.map((o) => o.width)).toEqual([1]);
  });
});

describe('SPEEDUP over the fair share (hand-computed)', () => {
  it('divides goodput by the goodput at ceil(G / J) GPUs and picks the fitter widths', () => {
    // 8 GPUs, 2 jobs: fair share 4 GPUs. Job 1 linear (g(4) = 4), job 2 saturating g(k) = min(k, 2).
    const oracle = fakeOracle({ 1: linear, 2: (g) => Math.min(g, 2) });
    const table = new GoodputTable(oracle, 4);
    const curves = [1, 2].map((id) => buildJobCurve(jobView(id, { arrival: -1e9 }), table, 8, 1));
    const fair = curves.map((c) => fairShareGoodput(c, table, 8, 2));
    expect(fair).toEqual([4, 2]);
    // Job 2 gains nothing past 2 GPUs, so its options stop there.
    expect(curves[1]!.options.map((o) => o.width)).toEqual([1, 2]);
    // Best: job 1 on 6 GPUs (speedup 1.5), job 2 on 2 (speedup 1): cost 1/1.501 + 1/1.001.
    const plan = planWidths(curves, fair, 8);
    expect(plan.chosen.map((o) => o?.width)).toEqual([6, 2]);
    expect(plan.cost).toBeCloseTo(1 / 1.501 + 1 / 1.001, 9);
  });

  it('falls back to the best option goodput when no batch fits the fair share', () => {
    const table = new GoodputTable(fakeOracle({ 1: (g) => (g > 8 ? 0 : g) }), 4);
    const curve = buildJobCurve(jobView(1), table, 16, 1);
    expect(fairShareGoodput(curve, table, 64, 2)).toBe(8);
  });
});
