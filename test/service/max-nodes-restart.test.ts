/**
 * A restart with a lower maxNodes than the nodes up, on the embedded local pool: boa chooses which nodes
 * go (idle ones first, as for any scale-in), and the cap holds. The emulated group had taken maxNodes as
 * its own maximum and released its newest nodes at the start, busy or not, keeping idle ones: both
 * running jobs were moved (a restart from their checkpoints) while idle nodes stayed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, startService } from './harness.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function boot(dataDir: string, clock: ManualClock, extra: Record<string, unknown> = {}) {
  return startService({
    dataDir,
    clock,
    executor: null,
    config: {
      tickSeconds: 60,
      calculatorMinutes: 1440,
      priorRates: { cifar10: 6, bert: 1 },
      local: { maxNodes: 16, bootSeconds: 0, releaseSeconds: 30 },
      budget: 30,
      ...extra,
    },
  });
}

type Service = Awaited<ReturnType<typeof boot>>;

const running = (s: Service) =>
  [...s.service.state.jobs.values()]
    .filter((j) => j.state === 'running')
    .map((j) => ({ id: j.id, generation: j.generation, allocation: j.allocation }));

/** Three jobs on six 4-GPU nodes: job 1 on the first four, jobs 2 and 3 on one each. */
async function sixNodes() {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-maxnodes-'));
  dirs.push(dataDir);
  const clock = new ManualClock();
  const s = await boot(dataDir, clock);
  await s.service.planner.idle();
  for (let i = 0; i < 3; i++) s.service.registerJob('cifar10', undefined);
  await s.ticks(3);
  expect((await s.pool.listNodes()).length).toBe(6);
  expect(running(s)).toHaveLength(3);
  return { dataDir, clock, s };
}

describe('a restart with maxNodes below the nodes up (local pool)', () => {
  it('idle nodes go, the running jobs stay where they run', async () => {
    const { dataDir, clock, s } = await sixNodes();
    s.service.finishJob(1, 'done');
    const before = running(s);
    const busy = new Set(before.flatMap((j) => j.allocation));
    expect(busy.size).toBe(2);
    await s.close();

    const after = await boot(dataDir, clock, { maxNodes: 3 });
    await after.ticks(2);
    expect(running(after)).toEqual(before);
    const left = await after.pool.listNodes();
    expect(new Set(left.map((n) => n.id))).toEqual(busy);
    await after.close();
  });

  it('all busy: the cap holds, the nodes paid come down to it', async () => {
    const { dataDir, clock, s } = await sixNodes();
    await s.close();

    const after = await boot(dataDir, clock, { maxNodes: 2 });
    await after.ticks(2);
    const left = await after.pool.listNodes();
    expect(left.length).toBeLessThanOrEqual(2);
    const open = after.db.$client.prepare('select count(*) as n from ledger_nodes where gone_at is null');
    expect(open.get()).toEqual({ n: left.length });
    expect(running(after).every((j) => j.allocation.every((n) => left.some((l) => l.id === n)))).toBe(true);
    await after.close();
  });
});
