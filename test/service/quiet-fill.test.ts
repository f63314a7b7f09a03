/**
 * The idle fill's quiet rule in the service (src/service/idle-fill.ts `fillRuleNow`, the simulator's
 * default too): once nothing has been submitted for the drain's hours, a job takes idle GPUs of its
 * nodes where that saves 20 restarts of its remaining time, on several nodes too; before, the 1.1x rule.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_FILL } from '../../src/core/exec/idle-fill.ts';
import { type ClassProfile, parseProfileFile } from '../../src/core/profile.ts';
import { DEFAULT_PROFILES } from '../../src/service/boot.ts';
import { fillIdle, fillRuleNow, lentGpusByNode } from '../../src/service/idle-fill.ts';
import type { ServiceJob } from '../../src/service/jobs.ts';
import { IncrementalPlacement } from '../../src/service/placement.ts';
import { startService } from './harness.ts';

const HOUR = 3_600_000;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('the fill rule now', () => {
  const config = { drainAfterHours: 2, quietFillSavedRestarts: 20 };
  it('is the 1.1x rule until nothing has been submitted for the drain hours, then by time saved', () => {
    expect(fillRuleNow(config, undefined, 10 * HOUR)).toBe(DEFAULT_FILL);
    expect(fillRuleNow(config, 0, 2 * HOUR - 1)).toBe(DEFAULT_FILL);
    expect(fillRuleNow(config, 0, 2 * HOUR)).toEqual({ ...DEFAULT_FILL, minSavedRestarts: 20 });
    expect(fillRuleNow({ ...config, quietFillSavedRestarts: 0 }, 0, 9 * HOUR)).toBe(DEFAULT_FILL);
    expect(fillRuleNow({ ...config, drainAfterHours: 0 }, 0, 9 * HOUR)).toBe(DEFAULT_FILL);
  });
});

describe('a job on several nodes', () => {
  const classes = new Map<string, ClassProfile>(
    parseProfileFile(JSON.parse(readFileSync(DEFAULT_PROFILES, 'utf8'))).classes.map((c) => [c.name, c]),
  );
  // deepspeech2 at its second statistical epoch: 6 GPUs 4.37x, 8 GPUs 5.41x, with hours of work left.
  const job = {
    id: 1,
    className: 'deepspeech2',
    statEpoch: 1,
    workDoneSeconds: 0,
    allocation: ['i-1', 'i-1', 'i-1', 'i-1', 'i-2', 'i-2'],
    width: 6,
    generationSince: 0,
  } as unknown as ServiceJob;
  const nodes = ['i-1', 'i-2'].map((id) => ({ id, launchedAt: 0, gpus: 4, ready: true }));
  const fill = (rule: typeof DEFAULT_FILL) => {
    const placement = new IncrementalPlacement();
    placement.place([job], () => 6, nodes, { gpusPerNode: 4, minNodes: 0, maxNodes: 2 });
    return fillIdle(
      placement,
      (id) => (id === job.id ? job : undefined),
      () => 6,
      () => classes,
      10 * HOUR,
      rule,
    );
  };

  it('takes the idle GPUs of its own nodes by the quiet rule, not by the 1.1x rule', () => {
    expect(fill(DEFAULT_FILL).size).toBe(0);
    const moved = fill({ ...DEFAULT_FILL, minSavedRestarts: 20 }).get(1);
    expect([...(moved ?? [])].sort()).toEqual(['i-1', 'i-1', 'i-1', 'i-1', 'i-2', 'i-2', 'i-2', 'i-2']);
  });

  it('counts its lent GPUs on the nodes holding most of it, one of its GPUs left on each', () => {
    const widened = {
      ...job,
      allocation: ['i-1', 'i-1', 'i-1', 'i-1', 'i-2', 'i-2', 'i-2'],
      idleFillGpus: 4,
    };
    expect(lentGpusByNode([widened])).toEqual(
      new Map([
        ['i-1', 3],
        ['i-2', 1],
      ]),
    );
  });
});

/** One 4-GPU node at most, 60 s ticks, a budget of 4; the jobs never poll (no lease runs out). */
async function oneNode() {
  const s = await startService({
    config: {
      tickSeconds: 60,
      leaseSeconds: 86_400,
      idleFill: true,
      local: { maxNodes: 1, bootSeconds: 0, releaseSeconds: 0 },
      budget: 4,
    },
  });
  cleanups.push(s.close);
  return s;
}

describe('the service', () => {
  /** 10 hours of 1-GPU work; 4 GPUs buy only 1.08x: the 1.1x rule never lends them, time saved does. */
  const FLAT = {
    name: 'flat',
    weight: 1,
    rescaleSeconds: 30,
    epochs: [{ workSeconds: 36_000, speedup: { '1': 1, '2': 1.04, '4': 1.08 } }],
  };

  it("lends a lone job its node's idle GPUs once nothing has been submitted for 2 hours", async () => {
    const s = await oneNode();
    // 0.4 jobs an hour of 10 GPU-hours: the budget's 4 GPUs at the plan's 1 GPU a job.
    s.service.putClass(FLAT, 0.4);
    await s.service.planner.idle();
    const { job } = s.service.registerJob('flat', 'a');
    await s.ticks(3);
    expect(job.allocation).toHaveLength(1);
    const generation = job.generation;
    await s.ticks(110); // under 2 hours since the submission: the 1.1x rule
    expect([job.allocation.length, job.generation]).toEqual([1, generation]);
    let widenedAfter = 0;
    while (job.allocation.length === 1 && widenedAfter < 30) {
      await s.ticks(1);
      widenedAfter += 1;
    }
    // Widened by the fill (not booked: the plan's width is 1) at the tick 2 hours in.
    expect(job.allocation).toHaveLength(4);
    expect(job.generation).toBe(generation + 1);
    expect(s.clock.now() - job.submittedAt).toBeGreaterThanOrEqual(2 * HOUR);
    expect(s.clock.now() - job.submittedAt).toBeLessThan(2 * HOUR + 3 * 60_000);
    expect(job.idleFillGpus).toBe(3);
    // Kept, and still lent: the drain, which began the same tick, does not take them for its own.
    await s.ticks(10);
    expect([job.allocation.length, job.generation]).toEqual([4, generation + 1]);
    expect(job.idleFillGpus).toBe(3);
    expect(s.service.state.allocatedGpus).toBe(1);
  }, 60_000);

  it('a job lent GPUs keeps them when a new job arrives that fits beside it (the drain ends)', async () => {
    // 3 GPUs buy 1.06x: the quiet rule lends a job 2, one GPU of the node stays idle.
    const FLAT3 = { ...FLAT, epochs: [{ workSeconds: 36_000, speedup: { '1': 1, '2': 1.04, '3': 1.06 } }] };
    const s = await oneNode();
    s.service.putClass(FLAT3, 0.4);
    await s.service.planner.idle();
    const { job: a } = s.service.registerJob('flat', 'a');
    await s.ticks(3);
    for (let i = 0; i < 200 && a.allocation.length === 1; i++) await s.ticks(1);
    expect(a.allocation).toHaveLength(3);
    await s.ticks(2);
    expect([a.idleFillGpus, s.service.state.allocatedGpus]).toEqual([2, 1]);
    const generation = a.generation;
    const { job: b } = s.service.registerJob('flat', 'b');
    await s.ticks(1);
    expect(b.allocation).toHaveLength(1);
    // Before, the drain had taken the lent GPUs as its width; a submission ends the drain, and the job
    // went back to 1 GPU (a restart) with the GPUs it gave back left idle.
    expect([a.allocation.length, a.generation]).toEqual([3, generation]);
  }, 60_000);
});
