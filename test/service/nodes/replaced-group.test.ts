/**
 * A GPU node group replaced as CloudFormation does it (an instance-type change): the new group is made
 * at 0 nodes, boa restarts pointed at it, and the old group, its nodes running jobs and paid, is deleted
 * only in the update's cleanup. boa counts the old nodes as paid and within the spend ceiling until
 * they are gone, across a restart too, and leaves their jobs where they run.
 */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { DescribeNodegroupCommand } from '@aws-sdk/client-eks';
import { afterEach, describe, expect, it } from 'vitest';
import { renderStatus } from '../../../src/cli/commands/status.ts';
import { paidGpusNow } from '../../../src/service/paid-now.ts';
import { ROLE_LABEL, STACK_TAGS } from '../../cloud/emulated-nodegroup.ts';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

/** A service at budget 8 on the group, two 4-GPU jobs placed on its two nodes. */
async function twoJobsAtBudget8() {
  const w = nodesWorld({ onDisk: true, idleFill: false });
  worlds.push(w);
  const first = await w.start();
  first.boa.service.setBudget(8);
  const a = first.job(4);
  const b = first.job(4);
  await first.tick(4);
  return { w, first, a, b };
}

describe('a replaced node group whose nodes still run', () => {
  it('counts them as paid within the ceiling (the new group waits), keeps their jobs, across a restart; then follows the new group', async () => {
    const { w, first, a, b } = await twoJobsAtBudget8();
    const oldNodes = w.group.asg.live().map((i) => i.id);
    expect(oldNodes).toHaveLength(2);
    expect(a.allocation).toHaveLength(4);
    expect(b.allocation).toHaveLength(4);
    const placed = { a: [...a.allocation], b: [...b.allocation] };
    const generations = { a: a.generation, b: b.generation };
    await first.boa.close();

    // CloudFormation: the new group at 0, boa restarted with its name; the old group still runs.
    w.group.replace('gpu-v2', { keepOld: true });
    w.configureNodegroup('gpu-v2');
    w.group.eksMock.resetHistory();
    w.group.ec2Mock.resetHistory();
    let boa = await w.start();
    // What AWS bills (every running instance, of both groups, a tick's minute later) against the ceiling;
    // what boa counts paid at the tick, as the ledger books it.
    const paidWithinCeiling = (at: string) => {
      const paid = w.group.running.length * 4;
      const ceiling = boa.boa.service.spendCeiling(w.clock.now())?.gpus ?? Number.POSITIVE_INFINITY;
      // The ceiling keeps a node it holds within half a node of it (against flapping): 2 GPUs.
      expect(paid, at).toBeLessThanOrEqual(ceiling + 2);
      const counted = paidGpusNow(boa.boa.service.state.nodes);
      expect(boa.boa.repo.ledger.openNodeGpus(), `the ledger's paid GPUs, ${at}`).toBe(counted);
      return counted;
    };
    for (let i = 0; i < 3; i++) {
      await boa.tick(1);
      expect(paidWithinCeiling(`tick ${i} after the restart`)).toBe(8);
    }
    expect(w.group.group.desiredSize, 'the new group waits for the old nodes to go').toBe(0);
    const job = (id: number) => boa.boa.service.job(id);
    expect(job(a.id).allocation).toEqual(placed.a);
    expect(job(b.id).allocation).toEqual(placed.b);
    expect(job(a.id).generation).toBe(generations.a);
    expect(job(b.id).generation).toBe(generations.b);
    const view = await boa.status();
    expect(view.nodeGroup.name).toBe('gpu-v2');
    expect(view.nodeGroup.replaced).toEqual([{ name: 'gpu', nodes: 2, paidGpus: 8 }]);
    expect(renderStatus(view)).toMatch(/replaced group\s+gpu: 2 nodes on their way out \(8 GPUs paid/);
    expect(w.group.terminations).toEqual([]);
    // One DescribeInstances listing answers for both groups; the old group is never described (the
    // stack's IAM now names the new one only).
    const listings = w.group.ec2Mock.commandCalls(DescribeInstancesCommand).map((c) => c.args[0].input);
    const names = listings.map((i) => i.Filters?.find((f) => f.Name === 'tag:eks:nodegroup-name')?.Values);
    expect(new Set(names.map((n) => JSON.stringify(n)))).toEqual(
      new Set([JSON.stringify(['gpu-v2', 'gpu'])]),
    );
    const described = w.group.eksMock.commandCalls(DescribeNodegroupCommand).map((c) => c.args[0].input);
    expect(described.every((i) => i.nodegroupName === 'gpu-v2')).toBe(true);

    // A restart meanwhile forgets nothing.
    await boa.boa.close();
    boa = await w.start();
    await boa.tick(2);
    expect(paidWithinCeiling('after a second restart')).toBe(8);
    expect(w.group.group.desiredSize).toBe(0);
    expect((await boa.status()).nodeGroup.replaced).toEqual([{ name: 'gpu', nodes: 2, paidGpus: 8 }]);
    expect(job(a.id).generation).toBe(generations.a);

    // CloudFormation's cleanup deletes the old group: EKS drains each old node (Terminating:Wait, EC2
    // running and paid) before it shuts down; the new one grows as the old nodes go.
    w.group.deleteReplaced({ drainMs: 5 * 60_000 });
    for (let i = 0; i < 4; i++) {
      await boa.tick(1);
      expect(paidWithinCeiling(`tick ${i} of the old nodes' drain`)).toBe(8);
      expect(w.group.group.desiredSize, 'the new group waits while the old nodes drain').toBe(0);
    }
    for (let i = 0; i < 10; i++) {
      await boa.tick(1);
      paidWithinCeiling(`tick ${i} after the old nodes' drain`);
    }
    expect(w.group.asg.live()).toHaveLength(2);
    expect((await boa.status()).nodeGroup.replaced).toEqual([]);
    const fresh = new Set(w.group.asg.live().map((i) => w.group.kube.nameOf(i.id)));
    expect([...job(a.id).allocation, ...job(b.id).allocation].every((n) => fresh.has(n))).toBe(true);
    expect(w.logs.events()).toContain('nodegroup.replaced-gone');
    expect(w.group.terminations).toEqual([]);
  }, 120_000);

  it('with nothing stored (a store from before 2026-12-06, deployed with the type change): finds the old group of its own deployment and counts its nodes', async () => {
    const { w, first, a, b } = await twoJobsAtBudget8();
    expect(w.group.asg.live()).toHaveLength(2);
    const placed = { a: [...a.allocation], b: [...b.allocation] };
    const oldIds = w.group.asg.live().map((x) => x.id);
    // The version before stored no group.
    first.boa.repo.deleteSetting('nodes.followedGroups');
    await first.boa.close();

    w.group.replace('gpu-v2', { keepOld: true });
    // Beside it in the cluster: boa's system group, and a group not boa's labelled as boa's: never taken.
    w.group.addGroup('system', { labels: { 'boa/node-role': 'system' }, tags: STACK_TAGS, instances: 1 });
    w.group.addGroup('research-gpu', { labels: ROLE_LABEL, tags: {}, instances: 1 });
    w.configureNodegroup('gpu-v2');
    const boa = await w.start();
    for (let i = 0; i < 3; i++) {
      await boa.tick(1);
      const ceiling = boa.boa.service.spendCeiling(w.clock.now())?.gpus ?? Number.POSITIVE_INFINITY;
      expect(paidGpusNow(boa.boa.service.state.nodes), `tick ${i}`).toBe(8);
      // What AWS bills of boa's two groups (the others' instances are not boa's) against the ceiling.
      const billed = w.group.running.filter((x) => oldIds.includes(x.id)).length + w.group.asg.live().length;
      expect(billed * 4, `tick ${i}`).toBeLessThanOrEqual(ceiling + 2);
    }
    expect(w.group.group.desiredSize, 'the new group waits for the old nodes to go').toBe(0);
    expect(boa.boa.service.job(a.id).allocation).toEqual(placed.a);
    expect(boa.boa.service.job(b.id).allocation).toEqual(placed.b);
    expect((await boa.status()).nodeGroup.replaced).toEqual([{ name: 'gpu', nodes: 2, paidGpus: 8 }]);
    expect(w.logs.events()).toContain('nodegroup.replaced-found');
    expect(w.group.terminations).toEqual([]);
  }, 120_000);

  it('of another type (4-GPU nodes replaced by 1-GPU ones): the old nodes take their 4 GPUs of the ceiling, and the new group waits', async () => {
    const { w, first } = await twoJobsAtBudget8();
    const oldIds = w.group.asg.live().map((x) => x.id);
    await first.boa.close();

    w.group.replace('gpu-v2', { keepOld: true, instanceType: 'g4dn.xlarge' });
    w.configureNodegroup('gpu-v2', 1);
    const boa = await w.start();
    for (let i = 0; i < 4; i++) {
      await boa.tick(1);
      const ceiling = boa.boa.service.spendCeiling(w.clock.now())?.gpus ?? Number.POSITIVE_INFINITY;
      // What AWS bills: the old nodes' 4 GPUs each, the new ones' 1.
      const billed =
        w.group.running.filter((x) => oldIds.includes(x.id)).length * 4 + w.group.asg.live().length;
      expect(billed, `tick ${i}: billed against the ceiling`).toBeLessThanOrEqual(ceiling + 0.5);
      expect(paidGpusNow(boa.boa.service.state.nodes), `tick ${i}: paid as boa counts it`).toBe(billed);
    }
    // Counted as 1 GPU each, the two old nodes left 6 of the 8 for the new group.
    expect(w.group.group.desiredSize, 'the new group waits for the old nodes to go').toBe(0);
    expect((await boa.status()).nodeGroup.replaced).toEqual([{ name: 'gpu', nodes: 2, paidGpus: 8 }]);
  }, 120_000);
});
