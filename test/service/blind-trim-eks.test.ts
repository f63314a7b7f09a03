/**
 * A restarted boa whose nodes cannot be listed lowers a group above its spend ceiling (blind-trim.ts),
 * protecting the nodes it keeps first. On EKS a job's allocation names its nodes by their Kubernetes
 * names, which SetInstanceProtection refuses: protection must name the instances, as the ledger does.
 * Real EKS, Auto Scaling and EC2 adapters over the emulated node group (kubernetes-crash-harness.ts).
 */
import { afterEach, expect, it } from 'vitest';
import { nodesOf } from '../../src/service/jobs.ts';
import { type CrashWorld, crashWorld, runningFirstLife } from './kubernetes-crash-harness.ts';

const worlds: CrashWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.close();
});

const instanceOf = (w: CrashWorld, node: string) =>
  (w.fake.nodes().find((n) => n.metadata.name === node)?.spec.providerID as string).split('/').pop()!;

it('lowers a group raised before a restart in a listing outage, the job nodes protected by instance id', async () => {
  const w = await crashWorld();
  worlds.push(w);
  const { first, id, placed } = await runningFirstLife(w);
  const jobInstances = nodesOf(placed.allocation).map((n) => instanceOf(w, n.node));
  await first.close();
  // Raised before the restart (by boa, the tick before it died) to nodes no listing showed it.
  w.group.setBounds(0, 8);
  w.group.setDesiredOutside(8);
  w.bridge.sync();
  const raisedTo = w.group.asg.desiredCapacity;
  expect(raisedTo).toBeGreaterThan(jobInstances.length);

  const second = await w.boot((pool) => {
    pool.listNodes = async () => {
      throw new Error('the server was unable to return a response in the time allotted');
    };
    return pool;
  });
  // A budget whose ceiling holds fewer nodes than the job's: only the launches no job is on can go.
  expect((await second.api('PUT', '/v1/budget', { gpuHoursPerHour: 8 })).status).toBe(200);
  await second.tick();

  const refused = w.logs.filter((l) => l.event === 'nodes.blind-trim-failed');
  expect(refused).toEqual([]);
  expect(w.group.asg.desiredCapacity).toBe(jobInstances.length);
  w.group.asg.step();
  const live = w.group.asg.live().map((i) => i.id);
  expect(live.sort()).toEqual([...jobInstances].sort());
  expect(second.boa.service.job(id)).toMatchObject({ state: 'running', restarts: 0 });
});
