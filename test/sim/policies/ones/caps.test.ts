import { describe, expect, it } from 'vitest';
import { maxGpusOf, scaledDown, STEP_SECONDS, WidthCaps } from '../../../../src/sim/policies/ones/caps.ts';
import type { JobView } from '../../../../src/sim/policy.ts';
import { jobView } from '../fakes.ts';

const onNode0 = (width: number) => Array.from({ length: width }, (_, i) => Math.floor(i / 4));
const ceiling8 = () => 8;

describe('ONES width limits', () => {
  it('starts a new job at one GPU, and it may not be pinned while it waits', () => {
    const caps = new WidthCaps();
    const job = jobView(1);
    caps.update([job], 0, 16, ceiling8);
    expect(caps.limit(1)).toBe(1);
    expect(caps.bounds(job, 0, 16)).toEqual({ lo: 1, hi: 1, canStop: true, pinned: false });
  });

  it('doubles the limit of a job at its limit once per step, up to the ceiling', () => {
    const caps = new WidthCaps();
    const at = (width: number): JobView =>
      jobView(1, { allocation: onNode0(width), rescales: 1, requestedGpus: 2 });
    caps.update([at(1)], STEP_SECONDS - 1, 64, ceiling8);
    expect(caps.limit(1)).toBe(1);
    caps.update([at(1)], STEP_SECONDS, 64, ceiling8);
    expect(caps.limit(1)).toBe(2);
    // Still at 1 GPU (below its limit of 2): no further doubling.
    caps.update([at(1)], 3 * STEP_SECONDS, 64, ceiling8);
    expect(caps.limit(1)).toBe(2);
    for (let step = 4; step < 12; step++) caps.update([at(caps.limit(1))], step * STEP_SECONDS, 64, () => 6);
    expect(caps.limit(1)).toBe(6);
  });

  it("never grows a job past 4 times its request (the artifact's scale_up), whatever its profile allows", () => {
    expect(maxGpusOf(jobView(1, { requestedGpus: 1 }))).toBe(4);
    expect(maxGpusOf(jobView(1, { requestedGpus: 16 }))).toBe(64);
    const caps = new WidthCaps();
    const at = (width: number): JobView =>
      jobView(1, { allocation: onNode0(width), rescales: 1, requestedGpus: 1 });
    for (let step = 1; step < 10; step++) caps.update([at(caps.limit(1))], step * STEP_SECONDS, 64, () => 64);
    expect(caps.limit(1)).toBe(4);
    expect(caps.bounds(at(4), 10 * STEP_SECONDS, 64).hi).toBe(4);
    const wide = new WidthCaps();
    const asked16 = (width: number): JobView =>
      jobView(1, { allocation: onNode0(width), rescales: 1, requestedGpus: 16 });
    for (let step = 1; step < 10; step++)
      wide.update([asked16(wide.limit(1))], step * STEP_SECONDS, 64, () => 64);
    expect(wide.limit(1)).toBe(64);
  });

  it('lets a settled running job at most halve or double, or stop', () => {
    const caps = new WidthCaps();
    const job = jobView(1, { allocation: onNode0(4), rescales: 1, requestedGpus: 2 });
    for (let step = 1; step <= 3; step++) caps.update([job], step * STEP_SECONDS, 64, ceiling8);
    expect(caps.limit(1)).toBe(8);
    expect(caps.bounds(job, 3 * STEP_SECONDS, 64)).toEqual({ lo: 2, hi: 8, canStop: true, pinned: false });
    // At 3 GPUs under a limit of 8: 2 (ceil(3 / 2)) to 6.
    const three = { ...job, allocation: onNode0(3) };
    expect(caps.bounds(three, 3 * STEP_SECONDS, 64)).toMatchObject({ lo: 2, hi: 6 });
    // On a 5-GPU cluster the cluster bounds it first.
    expect(caps.bounds(job, 3 * STEP_SECONDS, 5)).toMatchObject({ lo: 2, hi: 5 });
  });

  it('pins a job for a step after it moved, and while it restarts', () => {
    const caps = new WidthCaps();
    const job = jobView(1, { allocation: onNode0(2), rescales: 1 });
    caps.update([job], 0, 16, ceiling8);
    caps.moved(1, 1000);
    expect(caps.bounds(job, 1000 + STEP_SECONDS - 60, 16)).toEqual({
      lo: 2,
      hi: 2,
      canStop: false,
      pinned: true,
    });
    expect(caps.bounds(job, 1000 + STEP_SECONDS, 16).pinned).toBe(false);
    const restarting = { ...job, restartingUntil: 5000 };
    expect(caps.bounds(restarting, 4990, 16).pinned).toBe(true);
  });

  it('scales the widest job holding half the cluster down by its run time, only past the median and while another job waits', () => {
    // The artifact's rule: 2 x 4 / (3600 / 1200 + 1) = 2; under the median, or at it, nothing.
    expect(scaledDown(4, 3600, 1200)).toBe(2);
    expect(scaledDown(8, 1300, 1200)).toBe(8);
    expect(scaledDown(3, 100_000, 10)).toBe(2);
    const wide = (runSeconds: number) =>
      jobView(1, { allocation: onNode0(4), rescales: 1, requestedGpus: 2, runSeconds });
    const short = jobView(3, { allocation: onNode0(1), rescales: 1, runSeconds: 1200, arrival: 50 });
    const waiting = jobView(2, { arrival: 100 });
    const grown = () => {
      const caps = new WidthCaps();
      for (let step = 1; step <= 2; step++) caps.update([wide(600)], step * STEP_SECONDS, 8, ceiling8);
      expect(caps.limit(1)).toBe(4);
      return caps;
    };
    const busy = grown();
    // The median of 5000 and 1200 s run: 3100; 2 x 4 / (5000 / 3100 + 1) = 3.06, so 3, rounded up to
    // an even 4: no narrower than it runs (its limit doubled first). At 12000 s, median 6600: 2.84, 2.
    busy.update([wide(5000), short, waiting], 3 * STEP_SECONDS, 8, ceiling8);
    expect(busy.limit(1)).toBe(8);
    busy.update([wide(12000), short, waiting], 4 * STEP_SECONDS, 8, ceiling8);
    expect(busy.limit(1)).toBe(2);
    // It must now shrink to 2 (or stop) at its next change.
    expect(busy.bounds(wide(12000), 4 * STEP_SECONDS, 8)).toMatchObject({ lo: 2, hi: 2 });
    const idle = grown();
    idle.update([wide(12000), short], 3 * STEP_SECONDS, 8, ceiling8);
    expect(idle.limit(1)).toBe(8);
    const median = grown();
    median.update([wide(1000), short, waiting], 3 * STEP_SECONDS, 8, ceiling8);
    expect(median.limit(1)).toBe(8);
  });
});

describe('ONES resume rule (section 3.3.2)', () => {
  it('lets a preempted job ask for at most what it had, and halves its limit each tick it still waits', () => {
    const caps = new WidthCaps();
    const running = jobView(1, { allocation: onNode0(4), rescales: 1, requestedGpus: 2 });
    for (let step = 1; step <= 3; step++) caps.update([running], step * STEP_SECONDS, 64, ceiling8);
    caps.moved(1, 3 * STEP_SECONDS);
    expect(caps.limit(1)).toBe(8);
    const stopped = { ...running, allocation: [] };
    // First tick stopped: it asks for its old 4 GPUs, not its limit of 8.
    caps.update([stopped], 4 * STEP_SECONDS, 64, ceiling8);
    expect(caps.limit(1)).toBe(4);
    expect(caps.bounds(stopped, 4 * STEP_SECONDS, 64)).toMatchObject({ lo: 1, hi: 4 });
    // Still waiting at the next ticks: rejected, halved each time, down to 1.
    caps.update([stopped], 4 * STEP_SECONDS + 60, 64, ceiling8);
    expect(caps.limit(1)).toBe(2);
    caps.update([stopped], 4 * STEP_SECONDS + 120, 64, ceiling8);
    caps.update([stopped], 4 * STEP_SECONDS + 180, 64, ceiling8);
    expect(caps.limit(1)).toBe(1);
  });
});
