import { describe, expect, it } from 'vitest';
import type { ClassProfile } from '../../src/core/profile.ts';
import type { TickSnapshot } from '../../src/sim/engine/engine.ts';
import type { JobView } from '../../src/sim/policy.ts';
import { UnspentAccount } from '../../src/sim/unspent.ts';

// Speedup per width: 2 GPUs add 0.9, 4 add 0.8 more per GPU, 8 only 0.2 per GPU; 16 dips back up.
const SPEEDUP = { '1': 1, '2': 1.9, '4': 3.5, '8': 4.3, '16': 8 };

describe('the unspent account', () => {
  const classes = new Map([
    ['c', { name: 'c', epochs: [{ workSeconds: 1, speedup: SPEEDUP }] } as unknown as ClassProfile],
  ]);
  const job = (id: number): JobView => ({ id, app: 'c', statEpoch: 0 }) as JobView;
  const tick = (now: number, paid: number, widths: Record<number, number>): TickSnapshot =>
    ({
      tick: 0,
      cluster: {
        now,
        gpusPerNode: 4,
        mode: 'autoscaled',
        maxNodes: 10,
        nodes: [{ id: 0, gpus: paid, ready: true, readyAt: 0 }],
      },
      allocations: new Map(
        Object.entries(widths).map(([id, w]) => [Number(id), Array.from({ length: w }, (_, i) => i)]),
      ),
      activeJobs: Object.keys(widths).map(Number),
      jobs: Object.keys(widths).map((id) => job(Number(id))),
      colocate: [],
    }) as TickSnapshot;

  it('splits each hour under the budget by what the jobs present could use, and counts hours over', () => {
    const account = new UnspentAccount(10, classes);
    // Hour 1: paid 4, one job on 1 GPU (3 idle paid GPUs cover its 3 usable): 6 unusable.
    account.observe(tick(0, 4, { 1: 1 }));
    // Hour 2: paid 4, two jobs on 2 GPUs each (2 usable each): 4 usable of the 6 under, 2 unusable.
    account.observe(tick(3600, 4, { 1: 2, 2: 2 }));
    // Hour 3: paid 8, a job waiting: the 2 under count as waiting.
    account.observe(tick(7200, 8, { 1: 4, 2: 4, 3: 0 }));
    // Hour 4: paid 12: 2 over.
    account.observe(tick(10_800, 12, { 1: 4 }));
    const split = account.finish(14_400);
    expect(split.budgetGpuHours).toBeCloseTo(40, 9);
    expect(split.unusableGpuHours).toBeCloseTo(6 + 2, 9);
    expect(split.usableGpuHours).toBeCloseTo(4, 9);
    expect(split.waitingGpuHours).toBeCloseTo(2, 9);
    expect(split.underGpuHours).toBeCloseTo(14, 9);
    expect(split.overGpuHours).toBeCloseTo(2, 9);
  });
});
