/**
 * The node group's health on /metrics (found in an SRE trial): CloudWatch got CapacityBackoff,
 * NodeLaunchFailures, NodesProvisionTimedOut, NodeDriftCorrections and NodesRemoving, Prometheus none
 * of them, so a Prometheus user could not see AWS failing to launch the GPUs jobs waited for.
 */
import { afterEach, expect, it } from 'vitest';
import { type NodesWorld, nodesWorld } from '../service/nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

it('serves launch failures and the capacity backoff as CloudWatch gets them', async () => {
  const w = nodesWorld();
  worlds.push(w);
  const { tick, job, boa } = await w.start();
  const scrape = async () => {
    const res = await boa.app.request('/metrics', { headers: { authorization: `Bearer ${boa.token}` } });
    const text = await res.text();
    return (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  };
  const before = await scrape();
  expect(before('boa_node_launch_failures_total')).toBe(0);
  expect(before('boa_node_capacity_backoff')).toBe(0);

  w.group.setCapacity(1);
  job(4);
  job(4);
  await tick(2); // asks for 2 nodes; one launches, one fails for capacity: boa backs off (120 s)
  const after = await scrape();
  expect(after('boa_node_launch_failures_total')).toBe(1);
  expect(after('boa_node_capacity_backoff')).toBe(1);
  await tick(1); // CloudWatch's batch of this tick says the same
  const cloudwatch = (name: string) =>
    w.metrics
      .flat()
      .filter((m) => m.name === name)
      .at(-1)?.value;
  expect(cloudwatch('NodeLaunchFailures')).toBe(1);
  expect(cloudwatch('CapacityBackoff')).toBe(1);
  expect(after('boa_nodes_removing')).toBe(0);
  expect(after('boa_node_provision_timeouts_total')).toBe(0);
  expect(after('boa_node_drift_corrections_total')).toBe(0);
});
