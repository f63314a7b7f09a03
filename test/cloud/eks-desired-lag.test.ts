/**
 * EKS's desiredSize lags the Auto Scaling group's: boa removes a node by terminating it with a decrement
 * on the ASG, and DescribeNodegroup goes on showing the size before it until EKS syncs its view (seconds
 * to minutes). Over that time the group reads larger than boa left it. boa sets EKS's view to its own
 * size in the pass that terminated (one UpdateNodegroupConfig more than with no lag), so no later pass
 * reads the stale size: not as drift, not as nodes already asked for.
 */
import { DescribeNodegroupCommand } from '@aws-sdk/client-eks';
import { afterEach, describe, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld } from '../service/nodes-harness.ts';

const LAG_MS = 5 * 60_000;

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});
function world(maxSize = 4) {
  const w = nodesWorld({ sleep: async () => undefined, eksDesiredLagMs: LAG_MS, maxSize });
  worlds.push(w);
  return w;
}
/** What DescribeNodegroup shows as the desired size now. */
const eksShows = async (w: NodesWorld) =>
  (await w.group.eks.send(new DescribeNodegroupCommand({ clusterName: 'boa', nodegroupName: 'gpu' })))
    .nodegroup?.scalingConfig?.desiredSize;

describe("EKS's desired size lagging the Auto Scaling group's", () => {
  it("a node boa removed: the stale size is not taken for drift, and no node is launched to 'correct' it", async () => {
    const w = world();
    const { tick, job, boa } = await w.start();
    const a = job(4);
    const b = job(4);
    await tick(3);
    expect(w.group.asg.live()).toHaveLength(2);
    const sent = w.group.sizesSent().length;
    boa.service.finishJob(b.id, 'done');
    await tick(1);
    // EKS still showed 2 after the terminate; the same pass set its view to boa's size, so no later
    // pass reads the stale 2 (with no lag nothing more is sent: the group already shows 1).
    expect(w.group.sizesSent().slice(sent)).toEqual([1]);
    expect([w.group.asg.desiredCapacity, await eksShows(w)]).toEqual([1, 1]);
    await tick(7);
    expect(w.group.terminations).toHaveLength(1);
    expect(w.group.asg.live()).toHaveLength(1);
    expect(w.group.asg.desiredCapacity).toBe(1);
    expect(
      w.group
        .sizesSent()
        .slice(sent)
        .filter((size) => size > 1),
    ).toEqual([]);
    expect(w.logs.lines.filter((l) => l.event === 'nodes.drift')).toEqual([]);
    expect(a.allocation).toHaveLength(4);
  });

  it('two nodes removed and two jobs arriving within the lag: their nodes come at once, none past them', async () => {
    // Were the stale 3 read as the size, boa would ask for nothing and the jobs wait out the lag.
    const w = world();
    const { tick, job, boa } = await w.start();
    job(4);
    const b = job(4);
    const c = job(4);
    await tick(3);
    expect(w.group.asg.live()).toHaveLength(3);
    boa.service.finishJob(b.id, 'done');
    boa.service.finishJob(c.id, 'done');
    await tick(1);
    expect(w.group.asg.desiredCapacity).toBe(1);
    const d = job(4);
    const e = job(4);
    // A boot is a minute here (bootMs), a tick a minute: the lag is five.
    await tick(2);
    expect([d.allocation.length, e.allocation.length]).toEqual([4, 4]);
    expect(w.group.asg.desiredCapacity).toBe(3);
    expect(Math.max(...w.group.sizesSent())).toBe(3);
  });
});
