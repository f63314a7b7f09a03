import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { ListNodegroupsCommand } from '@aws-sdk/client-eks';
import { describe, expect, it } from 'vitest';
import type { FollowedGroups } from '../../src/service/ports.ts';
import { EksNodePool } from '../../src/cloud/aws/eks-node-pool.ts';
import { emulateNodegroup, poolOverEmulated, ROLE_LABEL, STACK_TAGS } from './emulated-nodegroup.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/**
 * EksNodePool and a replaced node group's nodes (replaced-nodegroups.ts): the cases the service test
 * (test/service/nodes/replaced-group.test.ts, a new name and a restart) does not reach.
 */
/** A group of two running nodes (EC2 booted), not yet read by a pool. */
function bootedGroup() {
  const time = fakeTime();
  const logs = captureLogs();
  const ng = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 4, desiredSize: 2, updatePolls: 0 });
  ng.asg.step();
  time.advance(120_000); // booted: EC2 running
  return { time, logs, ng };
}

function setup(stored?: FollowedGroups) {
  const { time, logs, ng } = bootedGroup();
  const pool = poolOverEmulated(ng, time, logs.logger);
  const kept: FollowedGroups[] = [];
  pool.followGroups(stored, (groups) => kept.push(groups));
  return { ng, pool, logs, time, kept, last: () => kept.at(-1) };
}

describe('EksNodePool lists a replaced group’s nodes as on their way out', () => {
  it('under the same name (a new ARN): tells the old instances apart by their Auto Scaling group', async () => {
    const { ng, pool, logs, time, last } = setup();
    await pool.describe();
    const old = (await pool.listNodes()).map((n) => n.id);
    expect(old).toHaveLength(2);
    ng.replace('gpu', { keepOld: true }); // deleted and made again under its name: a new ARN and ASG
    ng.setDesiredOutside(1);
    await pool.describe();
    time.advance(120_000);
    const nodes = await pool.listNodes();
    const outgoing = nodes.filter((n) => n.replacedGroup === 'gpu');
    expect(outgoing.map((n) => n.id).sort()).toEqual([...old].sort());
    expect(outgoing.every((n) => n.leaving && n.keepOnly && n.ready)).toBe(true);
    const fresh = nodes.filter((n) => !old.includes(n.id));
    expect(fresh).toHaveLength(1);
    expect(fresh[0]).not.toHaveProperty('leaving');
    expect(fresh[0]).not.toHaveProperty('replacedGroup');
    // Not taken for instances detached by hand from the group's ASG.
    expect(logs.events()).not.toContain('node.not-in-group');
    expect(last()?.replaced.map((r) => r.autoScalingGroup)).toEqual(['eks-gpu-uuid-1']);

    ng.deleteReplaced();
    time.advance(120_000);
    expect((await pool.listNodes()).map((n) => n.id)).toEqual(fresh.map((n) => n.id));
    expect(last()?.replaced).toEqual([]);
    expect(logs.events()).toContain('nodegroup.replaced-gone');
  });

  it('rolled back to the old group (started under its name again): the group it follows is not replaced', async () => {
    // A run on gpu-v2 replaced gpu; CloudFormation's update then failed and pointed boa back at gpu.
    const { pool, last, kept } = setup({
      current: { name: 'gpu-v2', arn: 'arn:aws:eks:us-east-1:123456789012:nodegroup/boa/gpu-v2/uuid-9' },
      replaced: [
        {
          name: 'gpu',
          arn: 'arn:aws:eks:us-east-1:123456789012:nodegroup/boa/gpu/uuid-1',
          autoScalingGroup: 'eks-gpu-uuid-1',
          since: 0,
        },
      ],
    });
    const nodes = await pool.listNodes();
    expect(nodes).toHaveLength(2);
    expect(nodes.some((n) => n.leaving || n.replacedGroup)).toBe(false);
    expect(last()?.current?.name).toBe('gpu');
    // gpu-v2 taken for replaced at the group's read, then forgotten: the same listing found none of it.
    expect(kept.map((g) => g.replaced.map((r) => r.name))).toEqual([['gpu-v2'], []]);
  });

  it('restarted under the configured name after following the group by its labels: nothing replaced', async () => {
    const first = setup();
    await first.pool.describe();
    first.ng.replace('gpu-v2');
    await first.pool.describe(); // gpu is gone: found again by its labels
    const stored = first.last();
    expect(stored?.current?.name).toBe('gpu-v2');
    const again = poolOverEmulated(first.ng, first.time, first.logs.logger);
    const kept: FollowedGroups[] = [];
    again.followGroups(stored, (groups) => kept.push(groups));
    first.time.advance(120_000);
    const nodes = await again.listNodes();
    expect(nodes).toHaveLength(2);
    expect(nodes.some((n) => n.leaving || n.replacedGroup)).toBe(false);
    expect(kept.at(-1)?.current?.name ?? stored?.current?.name).toBe('gpu-v2');
  });

  it('replaced under the same name while boa was down: the first listing of the restart tells them apart', async () => {
    const first = setup();
    await first.pool.describe();
    const old = (await first.pool.listNodes()).map((n) => n.id);
    first.ng.replace('gpu', { keepOld: true });
    const again = poolOverEmulated(first.ng, first.time, first.logs.logger);
    again.followGroups(first.last(), () => undefined);
    const nodes = await again.listNodes();
    expect(nodes.filter((n) => n.replacedGroup === 'gpu').map((n) => n.id)).toEqual(old);
    expect(first.logs.events()).not.toContain('node.not-in-group');
  });
});

describe('EksNodePool with nothing stored (the first run of this version, deployed with a new instance type)', () => {
  /** boa from before 2026-12-06 ran on gpu (nothing stored); CloudFormation made gpu-v2 and restarted boa on it. */
  function replacedBeforeAnyRecord() {
    const { time, logs, ng } = bootedGroup();
    const old = ng.instances.map((i) => i.id);
    ng.replace('gpu-v2', { keepOld: true });
    const pool = poolOverEmulated(ng, time, logs.logger, 'gpu-v2');
    const kept: FollowedGroups[] = [];
    pool.followGroups(undefined, (groups) => kept.push(groups));
    return { ng, pool, logs, time, old, kept };
  }

  it("finds the group of this deployment it replaced: its running nodes are the first listing's, on their way out", async () => {
    const { ng, pool, logs, time, old, kept } = replacedBeforeAnyRecord();
    const nodes = await pool.listNodes();
    const outgoing = nodes.filter((n) => n.replacedGroup === 'gpu');
    expect(outgoing.map((n) => n.id).sort()).toEqual([...old].sort());
    expect(outgoing.every((n) => n.leaving && n.keepOnly)).toBe(true);
    expect(nodes).toHaveLength(2);
    expect(kept.at(-1)?.current?.name).toBe('gpu-v2');
    expect(kept.at(-1)?.replaced.map((r) => [r.name, r.autoScalingGroup])).toEqual([
      ['gpu', 'eks-gpu-uuid-1'],
    ]);
    expect(logs.events().filter((e) => e === 'nodegroup.replaced-found')).toHaveLength(1);

    // Searched once: later reads do not list the cluster again; the group is forgotten once gone.
    const listed = ng.eksMock.commandCalls(ListNodegroupsCommand).length;
    ng.deleteReplaced();
    time.advance(120_000);
    expect(await pool.listNodes()).toEqual([]);
    await pool.describe();
    expect(ng.eksMock.commandCalls(ListNodegroupsCommand)).toHaveLength(listed);
    expect(kept.at(-1)?.replaced).toEqual([]);
  });

  it("CloudFormation's cleanup under way (the group DELETING, its nodes draining in Terminating:Wait): still listed as paid", async () => {
    const { ng, pool, time, old, kept } = replacedBeforeAnyRecord();
    ng.deleteReplaced({ drainMs: 10 * 60_000 });
    time.advance(60_000);
    const draining = (await pool.listNodes()).filter((n) => n.replacedGroup === 'gpu');
    expect(draining.map((n) => n.id).sort()).toEqual([...old].sort());
    expect(draining.every((n) => n.billed !== false && n.leaving)).toBe(true);
    expect(kept.at(-1)?.replaced.map((r) => r.name)).toEqual(['gpu']);
    // Drained and shut down: gone from EC2's running instances, and forgotten.
    time.advance(10 * 60_000);
    expect(await pool.listNodes()).toEqual([]);
    expect(kept.at(-1)?.replaced).toEqual([]);
  });

  it("leaves alone another stack's group, a group not boa's, and boa's system group, their nodes running", async () => {
    const { ng, pool, kept, old } = replacedBeforeAnyRecord();
    ng.addGroup('other-stack-gpu', {
      labels: ROLE_LABEL,
      tags: { ...STACK_TAGS, 'boa:cluster': 'other' },
      instances: 1,
    });
    ng.addGroup('not-boa-gpu', { labels: ROLE_LABEL, tags: { team: 'research' }, instances: 1 });
    ng.addGroup('system', { labels: { 'boa/node-role': 'system' }, tags: STACK_TAGS, instances: 1 });
    const nodes = await pool.listNodes();
    expect(nodes.map((n) => n.id).sort()).toEqual([...old].sort());
    expect(kept.at(-1)?.replaced.map((r) => r.name)).toEqual(['gpu']);
    const filters = ng.ec2Mock.commandCalls(DescribeInstancesCommand).map((c) => c.args[0].input.Filters);
    const names = filters.map((f) => f?.find((x) => x.Name === 'tag:eks:nodegroup-name')?.Values);
    expect(names.every((n) => JSON.stringify(n) === JSON.stringify(['gpu-v2', 'gpu']))).toBe(true);
  });

  it('where CloudFormation tags the groups with their stack, a group of another stack is left alone', async () => {
    const { ng, pool, kept } = replacedBeforeAnyRecord();
    // The configured and replaced groups both carry this stack's id; the stray one another stack's.
    const stack = 'arn:aws:cloudformation:us-east-1:123456789012:stack/boa/1';
    ng.tagGroups({ 'aws:cloudformation:stack-id': stack });
    ng.addGroup('stray-gpu', {
      labels: ROLE_LABEL,
      tags: {
        ...STACK_TAGS,
        'aws:cloudformation:stack-id': 'arn:aws:cloudformation:us-east-1:123456789012:stack/boa-2/2',
      },
      instances: 1,
    });
    await pool.listNodes();
    expect(kept.at(-1)?.replaced.map((r) => r.name)).toEqual(['gpu']);
  });

  it('a group of this deployment with no instance running is not followed', async () => {
    const { ng, pool, kept, logs } = replacedBeforeAnyRecord();
    ng.addGroup('gpu-empty', { labels: ROLE_LABEL, tags: STACK_TAGS, instances: 0 });
    await pool.listNodes();
    expect(kept.at(-1)?.replaced.map((r) => r.name)).toEqual(['gpu']);
    expect(logs.events()).toContain('nodegroup.replaced-gone');
  });

  it('a stack that never replaced its group finds none and lists as before', async () => {
    const { time, logs, ng } = bootedGroup();
    const pool = poolOverEmulated(ng, time, logs.logger);
    const kept: FollowedGroups[] = [];
    pool.followGroups(undefined, (groups) => kept.push(groups));
    const nodes = await pool.listNodes();
    expect(nodes).toHaveLength(2);
    expect(nodes.some((n) => n.leaving || n.replacedGroup)).toBe(false);
    expect(kept.at(-1)).toEqual({ current: expect.objectContaining({ name: 'gpu' }), replaced: [] });
    expect(logs.events()).not.toContain('nodegroup.replaced-found');
  });

  it("refused the cluster's groups (IAM), it says so once and lists its own group", async () => {
    const { ng, pool, logs, kept } = replacedBeforeAnyRecord();
    ng.eksMock.on(ListNodegroupsCommand).rejects(
      Object.assign(new Error('not authorized: eks:ListNodegroups'), {
        name: 'AccessDeniedException',
        $metadata: {},
      }),
    );
    const nodes = await pool.listNodes();
    expect(nodes.every((n) => !n.replacedGroup)).toBe(true);
    await pool.listNodes();
    expect(logs.events().filter((e) => e === 'nodegroup.leftovers-unsearched')).toHaveLength(1);
    expect(kept.at(-1)?.replaced).toEqual([]);
  });
});

describe('EksNodePool counts a replaced group’s nodes at their own type’s GPUs (an instance-type change)', () => {
  /** boa ran on gpu (g4dn.12xlarge, or `oldType`); the stack changed the type and restarted boa on gpu-v2. */
  function typeChanged(newType: string, gpusPerNode: number, oldType?: string, withKube = false) {
    const time = fakeTime();
    const logs = captureLogs();
    const ng = emulateNodegroup({
      clock: time.clock,
      minSize: 0,
      maxSize: 4,
      desiredSize: 2,
      updatePolls: 0,
      ...(oldType ? { instanceType: oldType } : {}),
    });
    ng.asg.step();
    time.advance(120_000);
    const first = poolOverEmulated(ng, time, logs.logger);
    let stored: FollowedGroups | undefined;
    first.followGroups(undefined, (groups) => (stored = groups));
    return {
      ng,
      time,
      logs,
      async restart() {
        await first.describe();
        const old = (await first.listNodes()).map((n) => n.id);
        ng.replace('gpu-v2', { keepOld: true, instanceType: newType });
        ng.setDesiredOutside(1);
        time.advance(120_000);
        const again = withKube
          ? new EksNodePool(
              { clusterName: 'boa', nodegroupName: 'gpu-v2', gpusPerNode },
              { ...ng, nodes: ng.kube, clock: time.clock, sleep: time.sleep, logger: logs.logger },
            )
          : poolOverEmulated(ng, time, logs.logger, 'gpu-v2', gpusPerNode);
        again.followGroups(stored, () => undefined);
        return { old, nodes: await again.listNodes() };
      },
    };
  }

  it('4-GPU nodes replaced by 1-GPU ones: the old nodes are paid and counted as 4 GPUs each, the new as 1', async () => {
    const { old, nodes } = await typeChanged('g4dn.xlarge', 1).restart();
    const outgoing = nodes.filter((n) => n.replacedGroup === 'gpu');
    expect(outgoing.map((n) => n.id).sort()).toEqual([...old].sort());
    // Counted as the new type's 1 GPU, 8 GPUs paid read as 2: boa filled the new group beside them.
    expect(outgoing.map((n) => n.gpus)).toEqual([4, 4]);
    const fresh = nodes.filter((n) => !n.replacedGroup);
    expect(fresh.map((n) => n.gpus)).toEqual([1]);
  });

  it('an old type boa does not know counts as the configured one’s GPUs, said once', async () => {
    const setup = typeChanged('g4dn.xlarge', 1, 'p4d.24xlarge');
    const { nodes } = await setup.restart();
    expect(nodes.filter((n) => n.replacedGroup === 'gpu').map((n) => n.gpus)).toEqual([1, 1]);
    const said = setup.logs.lines.filter((l) => l.event === 'nodegroup.replaced-type-unknown');
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ instanceType: 'p4d.24xlarge', gpusPerNode: 1 });
  });

  it('1-GPU nodes replaced by 4-GPU ones: Kubernetes showing their one GPU, they keep their jobs until they go', async () => {
    const { nodes } = await typeChanged('g4dn.12xlarge', 4, 'g4dn.xlarge', true).restart();
    const outgoing = nodes.filter((n) => n.replacedGroup === 'gpu');
    expect(outgoing).toHaveLength(2);
    // Compared with the configured 4 GPUs they were "no-gpus": not ready, their jobs moved at once.
    expect(outgoing.every((n) => n.ready && n.keepOnly && n.gpus === 1 && !n.waitingFor)).toBe(true);
  });
});
