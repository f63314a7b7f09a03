import { describe, expect, it } from 'vitest';
import type { FollowedGroups } from '../../src/service/ports.ts';
import { emulateNodegroup, poolOverEmulated } from './emulated-nodegroup.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/**
 * EksNodePool and a replaced node group's nodes (replaced-nodegroups.ts): the cases the service test
 * (test/service/nodes/replaced-group.test.ts, a new name and a restart) does not reach.
 */
function setup(stored?: FollowedGroups) {
  const time = fakeTime();
  const logs = captureLogs();
  const ng = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 4, desiredSize: 2, updatePolls: 0 });
  ng.asg.step();
  time.advance(120_000); // booted: EC2 running
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
