import { describe, expect, it } from 'vitest';
import { emulateNodegroup, poolOverEmulated } from './emulated-nodegroup.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

describe('EksNodePool.listNodes: nodes of an earlier launch template version', () => {
  it("marks the instances an EKS update replaces (launched before the group's new version), not its surge", async () => {
    // Expected: two instances; EKS starts a version update (the group set to launch template version
    // 2, one surge instance launched from it). The two from version 1 are listed outdated, the surge
    // not; before the update none is.
    const time = fakeTime();
    const ng = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 4, desiredSize: 2 });
    const pool = poolOverEmulated(ng, time, captureLogs().logger);
    expect((await pool.listNodes()).filter((n) => n.outdated)).toEqual([]);
    const old = ng.asg.live().map((i) => i.id);
    ng.startVersionUpdate(1);
    time.advance(120_000);
    const nodes = await pool.listNodes();
    expect(nodes).toHaveLength(3);
    expect(nodes.filter((n) => n.outdated).map((n) => n.id)).toEqual(old);
  });
});
