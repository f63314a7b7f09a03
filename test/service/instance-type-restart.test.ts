/**
 * A restart with another instance type while nodes of the old one are up, on the embedded local pool:
 * the old nodes keep their GPUs (an EC2 instance keeps its type), so the start is refused until they
 * are gone, with the way out in the message; the jobs on them keep their GPUs meanwhile. A type of the
 * same GPUs is refused alike: it was taken, and the old nodes named and priced as the new type.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/service/config.ts';
import { ManualClock, startService } from './harness.ts';

const RELEASE_SECONDS = 30;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function boot(dataDir: string, clock: ManualClock, instanceType: string) {
  return startService({
    dataDir,
    clock,
    executor: null,
    config: {
      instanceType,
      tickSeconds: 60,
      calculatorMinutes: 1440,
      priorRates: { cifar10: 6, bert: 1 },
      local: { maxNodes: 16, bootSeconds: 0, releaseSeconds: RELEASE_SECONDS },
      budget: 30,
    },
  });
}

type Service = Awaited<ReturnType<typeof boot>>;

const allocations = (s: Service) =>
  [...s.service.state.jobs.values()].map((j) => ({ id: j.id, state: j.state, allocation: j.allocation }));
const ledgerRows = (s: Service) =>
  s.db.$client.prepare('select id, gpus, launched_at, gone_at from ledger_nodes order by id').all();

async function runningOnTwelveXlarge() {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-itype-'));
  dirs.push(dataDir);
  const clock = new ManualClock();
  const s = await boot(dataDir, clock, 'g4dn.12xlarge');
  await s.service.planner.idle();
  for (let i = 0; i < 3; i++) s.service.registerJob('cifar10', undefined);
  await s.ticks(3);
  expect(allocations(s).every((j) => j.state === 'running')).toBe(true);
  return { dataDir, clock, s };
}

describe('a restart with another instance type while its nodes are up (local pool)', () => {
  it.each([
    ['g4dn.xlarge', 1],
    ['g4dn.metal', 8],
  ])('to %s is refused naming the nodes up and the way back; nothing changes', async (type, gpus) => {
    const { dataDir, clock, s } = await runningOnTwelveXlarge();
    const nodesUp = (await s.pool.listNodes()).length;
    const jobs = allocations(s);
    const rows = ledgerRows(s);
    await s.close();

    const refused = boot(dataDir, clock, type);
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow(
      `the local pool has ${nodesUp} nodes up launched with 4 GPUs each (instanceType g4dn.12xlarge), ` +
        `and this start sets ${gpus} GPU${gpus === 1 ? '' : 's'} a node (instanceType ${type})`,
    );
    await expect(refused).rejects.toThrow('Start with instanceType g4dn.12xlarge (gpusPerNode 4) until');

    // Back on the old type: the same nodes at 4 GPUs, the jobs where they were, the ledger unchanged.
    const again = await boot(dataDir, clock, 'g4dn.12xlarge');
    expect((await again.pool.listNodes()).map((n) => n.gpus)).toEqual(Array(nodesUp).fill(4));
    expect(allocations(again)).toEqual(jobs);
    expect(ledgerRows(again)).toEqual(rows);
    await again.close();
  });

  it('starts on the new type once the old nodes are gone, new nodes of the new GPUs', async () => {
    const { dataDir, clock, s } = await runningOnTwelveXlarge();
    for (const job of allocations(s)) s.service.finishJob(job.id, 'done');
    // One tick without moving the clock on: the nodes are released, paid until gone.
    await s.scheduler.tick();
    await s.scheduler.settle();
    expect((await s.pool.listNodes()).every((n) => n.leaving)).toBe(true);
    await s.close();
    await expect(boot(dataDir, clock, 'g4dn.xlarge')).rejects.toThrow(/local pool has \d+ nodes? up/);
    clock.advance(RELEASE_SECONDS);

    const next = await boot(dataDir, clock, 'g4dn.xlarge');
    await next.service.planner.idle();
    next.service.registerJob('cifar10', undefined);
    await next.ticks(2);
    const nodes = await next.pool.listNodes();
    expect(nodes.length).toBeGreaterThan(0);
    expect(nodes.every((n) => n.gpus === 1)).toBe(true);
    await next.close();
    // The pool now runs 1-GPU nodes: going back to 4 GPUs is refused in turn.
    await expect(boot(dataDir, clock, 'g4dn.12xlarge')).rejects.toThrow(
      'launched with 1 GPU each (instanceType g4dn.xlarge), and this start sets 4 GPUs a node',
    );
  });

  it('to g5.12xlarge (the same 4 GPUs) is refused naming both types; once the old nodes are gone it starts', async () => {
    const { dataDir, clock, s } = await runningOnTwelveXlarge();
    const nodesUp = (await s.pool.listNodes()).length;
    const jobs = allocations(s);
    const rows = ledgerRows(s);
    await s.close();

    const refused = boot(dataDir, clock, 'g5.12xlarge');
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow(
      `the local pool has ${nodesUp} nodes up launched as instanceType g4dn.12xlarge (4 GPUs each), ` +
        'and this start sets instanceType g5.12xlarge: boa would name and price them',
    );
    await expect(refused).rejects.toThrow('Start with instanceType g4dn.12xlarge (gpusPerNode 4) until');

    // Back on the old type: nothing changed, and the budget still names and prices g4dn.12xlarge.
    const again = await boot(dataDir, clock, 'g4dn.12xlarge');
    expect(allocations(again)).toEqual(jobs);
    expect(ledgerRows(again)).toEqual(rows);
    expect((await again.request('GET', '/v1/budget')).body).toMatchObject({
      instanceType: 'g4dn.12xlarge',
      nodePricePerHour: 3.912,
    });
    for (const job of allocations(again)) again.service.finishJob(job.id, 'done');
    await again.scheduler.tick();
    await again.scheduler.settle();
    await again.close();
    clock.advance(RELEASE_SECONDS);

    // The old nodes gone: the new type starts, and is the one kept for the nodes it launches.
    const next = await boot(dataDir, clock, 'g5.12xlarge');
    await next.service.planner.idle();
    next.service.registerJob('cifar10', undefined);
    await next.ticks(2);
    expect((await next.pool.listNodes()).length).toBeGreaterThan(0);
    expect((await next.request('GET', '/v1/budget')).body).toMatchObject({ instanceType: 'g5.12xlarge' });
    await next.close();
    await expect(boot(dataDir, clock, 'g4dn.12xlarge')).rejects.toThrow(
      'launched as instanceType g5.12xlarge (4 GPUs each), and this start sets instanceType g4dn.12xlarge',
    );
  });
});
