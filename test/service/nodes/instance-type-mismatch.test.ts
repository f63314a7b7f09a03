/**
 * A node group whose instances are of another type than boa's BOA_INSTANCE_TYPE (an operator changed
 * one and not the other, or a launch template changed the type within the group). Found in review:
 * every instance was listed at the configured GPUs, so the ledger paid 1 GPU for a 4-GPU g4dn.12xlarge
 * and the spend ceiling's node count let boa launch 4 times the budget's GPUs. Each node now counts at
 * its own type's GPUs, and boa raises no group of another GPU count (src/cloud/aws/instance-type-check.ts).
 */
import type Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { instanceTypeFacts } from '../../../src/core/instance-types.ts';
import type { EmulatedInstance } from '../../cloud/emulated-asg.ts';
import { type NodesWorld, nodesWorld, type NodesWorldOptions, TICK_SECONDS } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

const BOOT_MS = 60_000; // nodes-harness's EC2 pending time
const MINUTE = 60_000;

function world(options: NodesWorldOptions): NodesWorld {
  const w = nodesWorld({ idleFill: false, ...options });
  worlds.push(w);
  return w;
}

/** EC2's billed milliseconds of one instance by `now` (per second, 60 s minimum, from running). */
function ec2BilledMs(i: EmulatedInstance, now: number): number {
  const running = i.launchedAt + BOOT_MS;
  const stopped = i.terminatedAt === undefined ? now : (i.hookUntil ?? i.terminatedAt);
  if (Math.min(stopped, now) <= running) return 0;
  return Math.max(MINUTE, Math.min(stopped, now) - running);
}

/**
 * Per instance, the EC2 bill in GPU-ms (the group's type's GPUs) and what the ledger paid. The ledger
 * pays from LaunchTime, EC2 bills from running; it pays a node gone until the tick that sees it gone: the
 * ledger is above by up to the pending time and a tick.
 */
function billAgainstLedger(w: NodesWorld, db: Database.Database, instanceType: string) {
  const gpus = instanceTypeFacts(instanceType)!.gpus;
  const now = w.clock.now();
  const span = db.prepare(
    'select gpus, launched_at as launchedAt, gone_at as goneAt from ledger_nodes where id = ?',
  );
  return w.group.asg.instances.map((i) => {
    const row = span.get(i.id) as { gpus: number; launchedAt: number; goneAt: number | null } | undefined;
    return {
      id: i.id,
      billed: ec2BilledMs(i, now) * gpus,
      paid: row ? ((row.goneAt ?? now) - row.launchedAt) * row.gpus : 0,
      overGpuMs: (BOOT_MS + (i.terminatedAt === undefined ? 0 : TICK_SECONDS * 1000)) * gpus,
    };
  });
}

/** EC2's bill in GPU-hours for [from, to] (instances running in it, at the group type's GPUs). */
function billedGpuHours(w: NodesWorld, instanceType: string, from: number, to: number): number {
  const gpus = instanceTypeFacts(instanceType)!.gpus;
  let ms = 0;
  for (const i of w.group.asg.instances) {
    const stopped = i.terminatedAt === undefined ? to : (i.hookUntil ?? i.terminatedAt);
    ms += Math.max(0, Math.min(stopped, to) - Math.max(i.launchedAt + BOOT_MS, from));
  }
  return (ms * gpus) / 3_600_000;
}

function expectLedgerIsTheBill(w: NodesWorld, db: Database.Database, instanceType: string) {
  const rows = billAgainstLedger(w, db, instanceType);
  expect(rows.some((r) => r.billed > 0)).toBe(true);
  for (const r of rows) {
    expect(r.paid, `${r.id}: the ledger never charges less than EC2 bills`).toBeGreaterThanOrEqual(r.billed);
    expect(r.paid - r.billed, `${r.id}: nor more than pending and a tick`).toBeLessThanOrEqual(r.overGpuMs);
  }
}

const mismatchIssue = (view: any) =>
  (view.nodeGroup.issues as { code: string; message: string }[]).find(
    (i) => i.code === 'BoaInstanceTypeMismatch',
  );

describe('a node group of another instance type than BOA_INSTANCE_TYPE', () => {
  it('4-GPU instances, boa configured with 1-GPU ones: charged 4 GPUs each, never raised, refused on /v1/status', async () => {
    const w = world({ instanceType: 'g4dn.12xlarge', configuredType: 'g4dn.xlarge', desiredSize: 2 });
    const { boa, tick, job, status } = await w.start();
    boa.service.setBudget(4);
    job(4);
    await tick(10);
    // Without the fix: the ledger charged 1 GPU an instance, and boa raised the group to 4 nodes (16
    // GPUs against a budget of 4).
    expectLedgerIsTheBill(w, boa.db.$client, 'g4dn.12xlarge');
    expect(Math.max(0, ...w.group.sizesSent())).toBeLessThanOrEqual(2);
    expect(w.group.asg.live().length).toBeLessThanOrEqual(2);
    const issue = mismatchIssue(await status());
    expect(issue?.message).toMatch(/g4dn\.12xlarge \(4 GPUs\).*g4dn\.xlarge.*BOA_INSTANCE_TYPE/);
    expect(w.logs.events()).toContain('nodegroup.type-mismatch');
  });

  it('4-GPU instances beyond the budget, boa configured with 1-GPU ones: scaled in to the budget at once', async () => {
    const w = world({ instanceType: 'g4dn.12xlarge', configuredType: 'g4dn.xlarge', desiredSize: 2 });
    const { boa, tick, job } = await w.start();
    boa.service.setBudget(4);
    job(4);
    const start = w.clock.now();
    await tick(120);
    // The spend ceiling's promise from a fresh start: budget x (hours + slack x horizon), 4 x (2 + 0.1).
    // Without counting each node at its GPUs' share of the cap, two 4-GPU nodes were kept as two of
    // the ceiling's 4 (8 GPUs) until the ledger's debt cut the ceiling.
    const hours = (w.clock.now() - start) / 3_600_000;
    expect(billedGpuHours(w, 'g4dn.12xlarge', start, w.clock.now())).toBeLessThanOrEqual(4 * (hours + 0.1));
  });

  // The ledger charges an instance no listing showed from the group's launches (unseen-nodes.ts): at the
  // configured GPUs before, 1 GPU for a 4-GPU instance.
  it('an instance of the group launched and gone between two listings: charged at its type’s GPUs', async () => {
    const w = world({ instanceType: 'g4dn.12xlarge', configuredType: 'g4dn.xlarge', desiredSize: 1 });
    const { boa, tick, job } = await w.start();
    boa.service.setBudget(4);
    job(4);
    await tick(3);
    const [old] = w.group.asg.live();
    w.group.asg.replaceInstance(old!.id, 0);
    w.group.asg.step(); // the replacement launches: pending at the next tick
    await tick(1);
    const [replacement] = w.group.asg.live();
    w.clock.advance(30); // running since the tick, for 30 s, then replaced before the next listing
    w.group.asg.replaceInstance(replacement!.id, 0);
    w.clock.advance(30);
    await tick(3);
    const rows = billAgainstLedger(w, boa.db.$client, 'g4dn.12xlarge');
    const unseen = rows.find((r) => r.id === replacement!.id);
    expect(unseen?.billed).toBeGreaterThan(0);
    for (const r of rows) expect(r.paid, r.id).toBeGreaterThanOrEqual(r.billed);
  });

  it('the group names 4-GPU instances before it has any: boa, configured with 1-GPU ones, launches none', async () => {
    const w = world({ instanceType: 'g4dn.12xlarge', configuredType: 'g4dn.xlarge' });
    const { boa, tick, job, status } = await w.start();
    boa.service.setBudget(4);
    job(4);
    await tick(5);
    // Without the fix: 4 instances of 4 GPUs for a budget of 4 GPU-hours an hour.
    expect(w.group.asg.instances).toEqual([]);
    expect(mismatchIssue(await status())?.message).toMatch(/g4dn\.12xlarge.*g4dn\.xlarge/);
  });

  it('1-GPU instances, boa configured with 4-GPU ones: charged 1 GPU each, ready for jobs, never raised', async () => {
    const w = world({ instanceType: 'g4dn.xlarge', configuredType: 'g4dn.12xlarge', desiredSize: 2 });
    const { boa, tick, job, status } = await w.start();
    boa.service.setBudget(8);
    job(4);
    await tick(10);
    // Without the fix: the ledger charged 4 GPUs for each 1-GPU instance, and Kubernetes' 1 GPU per
    // node (fewer than 4) kept every node not ready.
    expectLedgerIsTheBill(w, boa.db.$client, 'g4dn.xlarge');
    expect(Math.max(0, ...w.group.sizesSent())).toBeLessThanOrEqual(2);
    const ready = boa.service.state.nodes.filter((n) => n.ready);
    expect(ready.length).toBeGreaterThan(0);
    expect(ready.every((n) => n.gpus === 1)).toBe(true);
    expect(mismatchIssue(await status())?.message).toMatch(/g4dn\.xlarge \(1 GPU\).*g4dn\.12xlarge/);
  });

  it('the type set by a launch template (not named by the group): found from the instances EC2 lists', async () => {
    const w = world({
      instanceType: 'g4dn.12xlarge',
      configuredType: 'g4dn.xlarge',
      typeInLaunchTemplate: true,
    });
    const { boa, tick, job, status } = await w.start();
    boa.service.setBudget(4);
    job(4);
    await tick(180);
    expectLedgerIsTheBill(w, boa.db.$client, 'g4dn.12xlarge');
    const sizes = w.group.sizesSent();
    // The first raise is sent before any instance shows its type (4 nodes for 4 GPUs: 16); none after.
    expect(sizes.filter((s, k) => k > 0 && s > (sizes[k - 1] ?? 0))).toEqual([]);
    // The ledger's debt brought the group back within the budget (4, and the ceiling's 10% slack).
    // Without the fix: 4 nodes kept, 16 GPU-hours billed an hour.
    const now = w.clock.now();
    expect(billedGpuHours(w, 'g4dn.12xlarge', now - 3_600_000, now)).toBeLessThanOrEqual(4 * 1.1);
    expect(mismatchIssue(await status())).toBeDefined();
  });

  it('the same type in both: no issue, and the group is raised as before', async () => {
    const w = world({ instanceType: 'g4dn.xlarge', configuredType: 'g4dn.xlarge' });
    const { boa, tick, job, status } = await w.start();
    boa.service.setBudget(4);
    job(4);
    await tick(5);
    expect(w.group.sizesSent()).toContain(4);
    expect(mismatchIssue(await status())).toBeUndefined();
    expect(w.logs.events()).not.toContain('nodegroup.type-mismatch');
  });
});
