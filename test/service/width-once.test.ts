/**
 * A running job's width moves once per change of the budget or the job's epoch, straight to its new
 * value (found by a colleague on the embedded pool, 1-GPU nodes, one cifar10 job past its first
 * epoch): a cut from 4 to 2 ran it one tick on 1 GPU, then restarted it on 2; after a restart of the
 * service it went 3 -> 1 -> 2. Narrowing by price under the spend ceiling steps cifar10 from 4 GPUs
 * straight to 1 (2 buys the least per GPU in that epoch), and the GPU it left over went to the job only
 * at the next tick, when its width held again could double: each transient a stop and a start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, startService } from './harness.ts';
import { GatedComputer } from './gated-computer.ts';

const dirs: string[] = [];
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The colleague's setup: ticks of 5 s, 1 GPU a node, nodes that boot and leave in 5 s. */
async function boot(dataDir: string, clock: ManualClock, computer: GatedComputer) {
  const s = await startService({
    dataDir,
    clock,
    computer,
    config: {
      tickSeconds: 5,
      instanceType: 'g4dn.xlarge',
      // The job never polls: no lease runs out.
      leaseSeconds: 86_400,
      local: { bootSeconds: 5, releaseSeconds: 5, maxNodes: 16 },
    },
  });
  cleanups.push(s.close);
  /** Each generation of job `id` the ticks gave it, and its width. */
  const widths = new Map<number, number>();
  const note = (id: number) => {
    const job = s.service.state.jobs.get(id)!;
    if (job.generation > 0) widths.set(job.generation, job.width);
  };
  const tick = async (id: number) => {
    // Before too: after a restart, the generation the job was restored at.
    note(id);
    await s.scheduler.tick();
    await s.scheduler.settle();
    note(id);
    s.clock.advance(5);
  };
  return { ...s, tick, widths };
}

/** A cifar10 job running at budget `budget` past its first epoch (2 GPUs buy least there), at its width. */
async function runningPastEpoch0(
  dataDir: string,
  clock: ManualClock,
  computer: GatedComputer,
  budget: number,
) {
  const s = await boot(dataDir, clock, computer);
  s.service.setBudget(budget);
  await s.service.planner.idle();
  const id = s.service.registerJob('cifar10', 'train').job.id;
  for (let i = 0; i < 4; i++) await s.tick(id);
  const job = s.service.state.jobs.get(id)!;
  expect(job.state).toBe('running');
  return { s, id, job };
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-width-once-'));
  dirs.push(dir);
  return dir;
}

describe("a running job's width", () => {
  it('goes from 4 GPUs straight to 2 on a cut from 4 to 2, the new plan computed meanwhile', async () => {
    const computer = new GatedComputer();
    const { s, id, job } = await runningPastEpoch0(':memory:', new ManualClock(), computer, 4);
    s.service.reportProgress(id, 1, undefined, 0, job.generation);
    for (let i = 0; i < 4; i++) await s.tick(id);
    expect([...s.widths.values()]).toEqual([4]);

    // The plan for the new budget lands between ticks (a worker computes it): the first tick after the
    // cut decides with the old plan and the new ceiling.
    computer.open = false;
    s.service.setBudget(2);
    await s.tick(id);
    expect(computer.held).toHaveLength(1);
    computer.held.splice(0).forEach((held) => held.go());
    await s.service.planner.idle();
    expect(s.service.state.plan?.row.budget).toBe(2);
    for (let i = 0; i < 6; i++) await s.tick(id);

    expect([...s.widths.entries()]).toEqual([
      [1, 4],
      [2, 2],
    ]);
    expect(s.service.spendCeiling()?.nodes).toBe(2);
  }, 30_000);

  it('goes from 3 GPUs straight to 2 at the first ticks after a restart, on the stored plan', async () => {
    const dataDir = tempDir();
    const clock = new ManualClock();
    const computer = new GatedComputer();
    const before = await runningPastEpoch0(dataDir, clock, computer, 3);
    expect([...before.s.widths.values()]).toEqual([3]);
    // Its second epoch reported, then the service killed (close writes nothing) before a tick acted on it.
    before.s.service.reportProgress(before.id, 1, undefined, 0, before.job.generation);
    await before.s.close();

    clock.advance(3);
    // The plan the restart asks for is still being computed: the ticks use the stored one.
    computer.open = false;
    const s = await boot(dataDir, clock, computer);
    const storedPlan = s.service.state.plan?.row.id;
    expect(storedPlan).toBeDefined();
    await s.tick(before.id);
    await s.tick(before.id);
    expect(s.service.state.plan?.row.id).toBe(storedPlan);
    computer.held.splice(0).forEach((held) => held.go());
    await s.service.planner.idle();
    for (let i = 0; i < 6; i++) await s.tick(before.id);

    expect([...s.widths.entries()]).toEqual([
      [1, 3],
      [2, 2],
    ]);
  }, 30_000);
});
