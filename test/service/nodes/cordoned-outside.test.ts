/**
 * A node cordoned by someone other than boa (kubectl cordon, a termination handler): boa places nothing
 * there, so once it is empty for provisionSeconds it is removed like a node that never became ready,
 * and the resize after launches one jobs can use. Before, it held its place in the group, paid for,
 * while a job that needed a node waited with nothing launched for it.
 */
import { afterEach, expect, it } from 'vitest';
import { nodeName, type NodesWorld, nodesWorld } from '../nodes-harness.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

it('removes a node cordoned outside boa once it is empty, and launches one the waiting job runs on', async () => {
  const w = nodesWorld({ provisionSeconds: 600 });
  worlds.push(w);
  const { tick, job, kube } = await w.start();
  const b = job(4);
  await tick(3);
  expect(b.allocation).toHaveLength(4);
  const cordoned = w.group.asg.live()[0]!;
  kube.store.update('nodes', undefined, nodeName(w.group, cordoned.id), (n: any) => ({
    ...n,
    spec: { ...n.spec, unschedulable: true },
  }));
  const c = job(4);
  await tick(30);
  expect(w.group.terminations.map((t) => t.instanceId)).toEqual([cordoned.id]);
  expect(c.allocation).toHaveLength(4);
  expect(b.allocation).toHaveLength(4);
  expect(w.group.asg.live().map((i) => i.id)).not.toContain(cordoned.id);
});
