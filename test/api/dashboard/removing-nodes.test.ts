/**
 * A node boa is removing is paid until it is terminated: the dashboard's nodes table counted it ready
 * (or "1 cordoned" under not ready, as if someone else had cordoned it), with nothing saying it was on
 * its way out, where `boa status` says `removing: node (scale-in, cordoned)` (found in review). The
 * nodes table names each node boa removes, why and how far along. Under it, each node as `boa nodes`
 * lists it (GET /v1/nodes): the counts alone did not say which node held which job. On an emulated EKS
 * node group, through the real Kubernetes client.
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

/** The node list's rows (#node-list), each by its heads, its cells' text (a time's tags dropped). */
function nodeListRows(html: string): Array<Record<string, string>> {
  const text = (cell: string) => cell.replace(/<[^>]*>/g, '');
  const cells = (row: string) => [...row.matchAll(/<t[hd]>(.*?)<\/t[hd]>/g)].map((m) => text(m[1]!));
  const [head, ...rows] = html.split('</tr>').map(cells);
  return rows.filter((r) => r.length > 0).map((r) => Object.fromEntries(head!.map((h, i) => [h, r[i]!])));
}

/** A node of GET /v1/nodes in the cells `boa nodes` gives it (src/cli/commands/nodes.ts). */
function expectedRow(n: any): Record<string, string> {
  const jobs = [
    ...n.jobs.map((j: any) => `${j.id}:${j.gpus}`),
    ...n.stopping.map((s: any) => `${s.jobId}:${s.gpus}(stopping)`),
  ];
  const second = (at: string) => at.replace(/\.\d{3}Z$/, 'Z');
  return {
    node: n.name ?? n.id,
    instance: n.id,
    state: n.state,
    GPUs: String(n.gpus),
    jobs: jobs.join(', ') || '-',
    launched: second(n.launchedAt),
    paid: n.paidSince ? second(n.paidSince) : '-',
    note: n.removing ? `${n.removing.reason}, ${n.removing.state} (since ${second(n.removing.since)})` : '-',
  };
}

it('names a node boa removes, why and how far along, beside the cancelled job still stopping on it', async () => {
  const w = nodesWorld();
  worlds.push(w);
  const ex = gracefulExecutor();
  const { tick, job, boa, status } = await w.start(undefined, ex.executor);
  const a = job(4, { command: ['train'] });
  const b = job(4, { command: ['train'] });
  const auth = { headers: { authorization: `Bearer ${boa.token}` } };
  await tick(3);
  expect(w.group.asg.live()).toHaveLength(2);
  const aId = w.group.asg.live().find((i) => nodeName(w.group, i.id) === a.allocation[0])!.id;
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
  // Under the counts, each node as GET /v1/nodes has it: b's node removing, b's replica still holding
  // its 4 GPUs there (none free), a's node ready with a's 4.
  const listed = (await (await boa.app.request('/v1/nodes', auth)).json()) as any;
  expect(listed.nodes).toHaveLength(2);
  const rows = nodeListRows(dash.element('node-list').innerHTML);
  expect(rows).toEqual(listed.nodes.map((n: any) => expect.objectContaining(expectedRow(n))));
  const [aRow, bRow] = [nodeName(w.group, aId), bNode].map((name) => rows.find((r) => r.node === name)!);
  expect(bRow).toMatchObject({ state: 'removing', GPUs: '4', free: '0', jobs: `${b.id}:4(stopping)` });
  expect(bRow!.note).toMatch(/^scale-in, cordoned \(since \S+Z\)$/);
  expect(aRow).toMatchObject({ state: 'ready', free: '0', jobs: `${a.id}:4`, note: '-' });
  expect(dash.element('node-list').innerHTML).toMatch(
    /^<table><caption>each node at the last tick, \S+Z<\/caption><thead>/,
  );

  // A failing /v1/nodes blanks only the list, and one unanswered marks only it stale: the counts, the
  // jobs and the rest are drawn from their own calls.
  let nodesCall: 'fail' | 'hang' | 'answer' = 'fail';
  const hung: Array<() => void> = [];
  let pending = 0; // calls other than a hung one not answered yet
  const failing = loadDashboardScript(async (path, init) => {
    if (path === '/v1/nodes' && nodesCall === 'fail')
      return Response.json(
        { error: { code: 'internal', message: 'internal error; see the log' } },
        { status: 500 },
      );
    if (path === '/v1/nodes' && nodesCall === 'hang') await new Promise<void>((r) => hung.push(r));
    pending++;
    try {
      return await boa.app.request(path, init);
    } finally {
      pending--;
    }
  });
  await failing.start(boa.token);
  expect(failing.element('node-list').innerHTML).toBe(
    '<p class="error">could not show this: internal error; see the log</p>',
  );
  expect(nodesRow(failing.element('nodes').innerHTML)).toMatchObject({
    actual: '2',
    removing: `${bNode} (scale-in, cordoned)`,
  });
  expect(failing.element('active-jobs').innerHTML).toContain('<td>cancelled</td>');
  nodesCall = 'answer';
  await failing.refresh(boa.token);
  expect(
    nodeListRows(failing.element('node-list').innerHTML)
      .map((r) => r.node)
      .sort(),
  ).toEqual(rows.map((r) => r.node).sort());
  nodesCall = 'hang';
  failing.refreshes.at(-1)!(); // the list's call left unanswered
  await expect.poll(() => hung.length === 1 && pending === 0, { timeout: 20_000 }).toBe(true);
  failing.refreshes.at(-1)!(); // the next round finds it still in flight
  await expect.poll(() => failing.element('node-list').classes.has('stale'), { timeout: 20_000 }).toBe(true);
  for (const id of ['nodes', 'jobs', 'health', 'active-jobs', 'resizes'])
    expect(failing.element(id).classes.has('stale'), id).toBe(false);
  nodesCall = 'answer';
  for (const release of hung.splice(0)) release();
  await expect.poll(() => failing.element('node-list').classes.has('stale'), { timeout: 20_000 }).toBe(false);

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
  // Gone from the listing, gone from the list.
  expect(nodeListRows(dash.element('node-list').innerHTML).map((r) => r.node)).toEqual([
    nodeName(w.group, aId),
  ]);
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

it('says a list not known yet as `boa nodes` does, and the first nodes of many with where to see all', () => {
  const dash = loadDashboardScript();
  dash.renderNodeList({ nodes: null, lastTickAt: null });
  expect(dash.element('node-list').innerHTML).toBe('<p>not listed yet (no tick since boa started)</p>');
  const at = '2026-12-07T10:00:00.000Z';
  const node = (i: number) => ({
    id: `i-${i}`,
    name: `ip-10-0-0-${i}`,
    state: 'ready',
    removing: null,
    replacedGroup: i === 0 ? 'gpu-old' : null,
    gpus: 4,
    foreignGpus: i === 0 ? 1 : 0,
    jobs: [],
    stopping: [],
    launchedAt: at,
    paidSince: null,
  });
  dash.renderNodeList({ nodes: Array.from({ length: 45 }, (_, i) => node(i)), lastTickAt: at });
  const html = dash.element('node-list').innerHTML;
  expect(nodeListRows(html)).toHaveLength(30);
  expect(nodeListRows(html)[0]).toEqual({
    node: 'ip-10-0-0-0',
    instance: 'i-0',
    state: 'ready',
    GPUs: '4',
    free: '3',
    jobs: '-',
    launched: '2026-12-07T10:00:00Z',
    paid: '-',
    note: 'replaced group gpu-old; 1 GPUs held by pods not boa&#39;s',
  });
  expect(html).toContain(
    '<p class="shown">Shown: the first 30 of 45 nodes (all: <code>boa nodes</code>).</p>',
  );
});
