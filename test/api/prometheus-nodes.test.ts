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
  const cloudwatch = (name: string) => lastPublished(w, name);
  expect(cloudwatch('NodeLaunchFailures')).toBe(1);
  expect(cloudwatch('CapacityBackoff')).toBe(1);
  expect(after('boa_nodes_removing')).toBe(0);
  expect(after('boa_node_provision_timeouts_total')).toBe(0);
  expect(after('boa_node_drift_corrections_total')).toBe(0);
});

it('serves provision timeouts, drift corrections and terminations, each its own count, as CloudWatch gets them', async () => {
  // Found in review: the counters were only ever read at 0, so two swapped keys passed.
  const w = nodesWorld({ provisionSeconds: 600 });
  worlds.push(w);
  const { tick, job, boa } = await w.start();
  const scrape = async () => {
    const res = await boa.app.request('/metrics', { headers: { authorization: `Bearer ${boa.token}` } });
    const text = await res.text();
    return (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  };
  const a = job(4);
  job(4);
  await tick(3); // two nodes, Ready, placed
  w.group.setDesiredOutside(4); // corrected at the next tick, the 2 extra nodes terminated
  await tick(1);
  w.group.setDesiredOutside(3); // again: 1 more
  await tick(1);
  boa.service.finishJob(a.id, 'done'); // its node is idle: scaled in
  await tick(1);
  job(4);
  await tick(1); // a node is launched for it, which never becomes Ready
  w.group.kube.neverReadies(w.group.asg.live().at(-1)!.id);
  await tick(10); // provisionSeconds after its launch: removed
  const m = await scrape();
  expect(m('boa_node_launch_failures_total')).toBe(0);
  expect(m('boa_node_provision_timeouts_total')).toBe(1);
  expect(m('boa_node_drift_corrections_total')).toBe(2);
  expect(m('boa_node_terminations_total')).toBe(5);
  // A node launched that never became ready backs the launches off (docs/nodes.md, point 7); it is a
  // provision timeout, not one of the group's failed launches.
  expect(m('boa_node_capacity_backoff')).toBe(1);
  expect(m('boa_nodes_removing')).toBe(0);
  await tick(1);
  const cloudwatch = (name: string) => lastPublished(w, name);
  expect(cloudwatch('NodesProvisionTimedOut')).toBe(1);
  expect(cloudwatch('NodeDriftCorrections')).toBe(2);
  expect(cloudwatch('NodeLaunchFailures')).toBe(0);
});

/** The value of a CloudWatch metric in the newest batch that has it. */
function lastPublished(w: NodesWorld, name: string): number | undefined {
  return w.metrics
    .flat()
    .filter((m) => m.name === name)
    .at(-1)?.value;
}
