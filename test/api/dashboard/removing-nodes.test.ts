/**
 * A node boa is removing is paid until it is terminated: the dashboard's nodes table counted it ready
 * (or "1 cordoned" under not ready, as if someone else had cordoned it), with nothing saying it was on
 * its way out, where `boa status` says `removing: node (scale-in, cordoned)` (found in review). The
 * nodes table names each node boa removes, why and how far along. On an emulated EKS node group, through
 * the real Kubernetes client.
 */
import { afterEach, expect, it } from 'vitest';
import { nodeName, type NodesWorld, nodesWorld } from '../../service/nodes-harness.ts';
import { gracefulExecutor } from '../../service/nodes/graceful-executor.ts';
import { loadDashboardScript } from './load-app.ts';
import { renderStatus } from '../../../src/cli/commands/status.ts';

const worlds: NodesWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

/** The nodes table's one row, by its heads. */
function nodesRow(html: string): Record<string, string> {
  const cells = (row: string) => [...row.matchAll(/<t[hd]>(.*?)<\/t[hd]>/g)].map((m) => m[1]!);
  const [head, row] = html.split('</tr>').map(cells);
  return Object.fromEntries(head!.map((h, i) => [h, row![i]!]));
}

it('names a node boa removes, why and how far along, beside the cancelled job still stopping on it', async () => {
  const w = nodesWorld();
  worlds.push(w);
  const ex = gracefulExecutor();
  const { tick, job, boa, status } = await w.start(undefined, ex.executor);
  job(4, { command: ['train'] });
  const b = job(4, { command: ['train'] });
  await tick(3);
  expect(w.group.asg.live()).toHaveLength(2);
  const bNode = nodeName(
    w.group,
    w.group.asg.live().find((i) => nodeName(w.group, i.id) === b.allocation[0])!.id,
  );
  boa.service.finishJob(b.id, 'cancelled');
  await tick(1); // b's node chosen for scale-in and cordoned; b's replica still stops on it
  const group = (await status()).nodeGroup;
  expect(group.removing.map((r: any) => [r.node, r.reason, r.state])).toEqual([
    [bNode, 'scale-in', 'cordoned'],
  ]);
  // The tick listed it before its cordon, ready: counted apart from the ready nodes all the same (it
  // read 2 ready, the tile "2 / 2"), and the counts add up to the nodes listed.
  expect(group).toMatchObject({ actualNodes: 2, readyNodes: 1, removingNodes: 1, notReady: {} });

  const dash = loadDashboardScript(async (path, init) => boa.app.request(path, init));
  await dash.refresh(boa.token);
  // Each of the nodes listed in one cell: 1 ready, 0 booting, none not ready, 1 removing.
  expect(nodesRow(dash.element('nodes').innerHTML)).toMatchObject({
    actual: '2',
    ready: '1',
    booting: '0',
    'not ready': '-',
    removing: `${bNode} (scale-in, cordoned)`,
  });
  // Listed cordoned at the next tick: still removing, not "1 cordoned" under not ready beside it; `boa
  // status` and /metrics count it as the API does.
  await tick(1);
  const later = await status();
  expect(later.nodeGroup).toMatchObject({ actualNodes: 2, readyNodes: 1, removingNodes: 1, notReady: {} });
  expect(renderStatus(later)).toMatch(
    /^nodes\s+\d+ desired, 2 actual, 1 ready, 1 removing at the last tick/m,
  );
  const metrics = await (
    await boa.app.request('/metrics', { headers: { authorization: `Bearer ${boa.token}` } })
  ).text();
  expect(metrics).toMatch(/^boa_nodes\{kind="ready"\} 1$/m);
  expect(metrics).toMatch(/^boa_nodes\{kind="removing"\} 1$/m);
  // What holds its GPUs meanwhile: the cancelled job, its replica stopping.
  expect(dash.element('active-jobs').innerHTML).toMatch(
    /<td>cancelled<\/td><td>0\+4 stopping<\/td>.*stopping: 1 replica still running, 4 GPUs held \(SIGTERM being sent\)/,
  );

  // Its replica gone, the node is terminated: no longer said as being removed, nor the job listed.
  ex.releaseAll();
  // Terminated and listed still (EKS's Terminating:Wait, minutes on a real group): counted removing,
  // and named so, with nothing open about it (before: counted nowhere named, the table not adding up).
  await tick(1);
  const terminated = await status();
  expect(terminated.nodeGroup).toMatchObject({ actualNodes: 2, readyNodes: 1, removingNodes: 1 });
  expect(terminated.nodeGroup.removing.map((r: any) => [r.node, r.reason, r.state])).toEqual([
    [bNode, 'scale-in', 'terminated'],
  ]);
  expect(renderStatus(terminated)).toMatch(
    new RegExp(`^removing\\s+${bNode} \\(scale-in, terminated\\)$`, 'm'),
  );
  await dash.refresh(boa.token);
  expect(nodesRow(dash.element('nodes').innerHTML).removing).toBe(`${bNode} (scale-in, terminated)`);
  // Still listed, no longer a removal under way (CloudWatch's NodesRemoving counts those).
  const scraped = await (
    await boa.app.request('/metrics', { headers: { authorization: `Bearer ${boa.token}` } })
  ).text();
  expect(scraped).toMatch(/^boa_nodes\{kind="removing"\} 1$/m);
  expect(scraped).toMatch(/^boa_nodes_removing 0$/m);
  await tick(3);
  expect((await status()).nodeGroup.removing).toEqual([]);
  await dash.refresh(boa.token);
  expect(nodesRow(dash.element('nodes').innerHTML).removing).toBe('-');
  expect(dash.element('active-jobs').innerHTML).not.toContain('cancelled');
});

it('names the first few when many are removed, and where to see them all', () => {
  const dash = loadDashboardScript();
  const removing = Array.from({ length: 7 }, (_, i) => ({
    nodeId: `i-${i}`,
    node: i === 0 ? null : `ip-10-0-0-${i}`,
    reason: 'over-ceiling',
    state: 'chosen',
  }));
  const group = {
    desiredNodes: 7,
    readyNodes: 7,
    notReady: {},
    replaced: [],
    removing,
    minSize: 0,
    maxSize: 9,
  };
  dash.renderTables(null, { nodeGroup: group, jobs: {} });
  expect(nodesRow(dash.element('nodes').innerHTML).removing).toBe(
    'i-0 (over-ceiling, chosen), ip-10-0-0-1 (over-ceiling, chosen), ip-10-0-0-2 (over-ceiling, chosen), ' +
      'ip-10-0-0-3 (over-ceiling, chosen), ip-10-0-0-4 (over-ceiling, chosen), 2 more (<code>boa status</code>)',
  );
});
