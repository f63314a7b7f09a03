/**
 * `boa nodes`: the real CLI against the real service (local pool), its table from GET /v1/nodes.
 * The removing and stopping cells of a scale-in are in test/api/nodes.test.ts's API rows, drawn here
 * by renderNodes in the same words.
 */
import { afterEach, expect, it } from 'vitest';
import { renderNodes } from '../../src/cli/commands/nodes.ts';
import { startCliService } from './cli-harness.ts';
import { rows } from './table-rows.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

it('lists the nodes of the last listing, each with its state, GPUs and the jobs on it', async () => {
  const s = await startCliService();
  cleanups.push(s.close);
  // Before a tick has listed the pool: not known, not "no nodes".
  const before = await s.boa(['nodes']);
  expect(before.status).toBe(0);
  expect(before.stdout).toBe('not listed yet (no tick since boa started)\n');

  await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
  const job = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
  await s.ticks(4); // the local pool's nodes boot and the job starts
  const api = (await s.request('GET', '/v1/nodes')).body;
  const holding = api.nodes.filter((n: any) => n.jobs.length > 0);
  expect(holding.length).toBeGreaterThan(0); // the scenario must place the job

  const run = await s.boa(['nodes']);
  expect(run.status).toBe(0);
  const head = run.stdout.split('\n')[0]!.trim().split(/\s+/);
  expect(head).toEqual(['node', 'instance', 'state', 'GPUs', 'free', 'jobs', 'launched', 'paid', 'note']);
  const table = rows(run.stdout);
  expect(table.map((r) => r[0])).toEqual(api.nodes.map((n: any) => n.name ?? n.id));
  for (const [i, n] of (api.nodes as any[]).entries()) {
    const held = n.jobs.reduce((sum: number, j: any) => sum + j.gpus, 0);
    const jobs = n.jobs.length > 0 ? n.jobs.map((j: any) => `${j.id}:${j.gpus}`).join(',') : '-';
    expect(table[i]).toEqual([
      n.name ?? n.id,
      n.id,
      'ready',
      String(n.gpus),
      String(n.gpus - held),
      jobs,
      n.launchedAt.replace('.000Z', 'Z'),
      n.paidSince.replace('.000Z', 'Z'),
      '-',
    ]);
  }
  expect(table.some((r) => r[5]!.split(',').includes(`${job.id}:${holding[0].jobs[0].gpus}`))).toBe(true);

  // --json: the API's body unchanged.
  const json = await s.boa(['--json', 'nodes']);
  expect(JSON.parse(json.stdout)).toEqual((await s.request('GET', '/v1/nodes')).body);
});

it('draws a node boa removes and the replica still stopping there in the words of boa status', () => {
  const since = '2026-12-07T10:00:00.000Z';
  const text = renderNodes({
    lastTickAt: since,
    nodes: [
      {
        id: 'i-0abc',
        name: 'ip-10-0-0-7',
        state: 'removing',
        removing: { reason: 'scale-in', state: 'cordoned', since },
        replacedGroup: null,
        gpus: 4,
        foreignGpus: 0,
        jobs: [],
        stopping: [{ jobId: 9, replicas: 1, gpus: 4 }],
        launchedAt: since,
        paidSince: since,
      },
    ],
  });
  expect(rows(text)[0]).toEqual([
    'ip-10-0-0-7',
    'i-0abc',
    'removing',
    '4',
    '0',
    '9:4(stopping)',
    '2026-12-07T10:00:00Z',
    '2026-12-07T10:00:00Z',
    ...'scale-in, cordoned (since 2026-12-07T10:00:00Z)'.split(' '),
  ]);
  // Listed, not yet answered since the start: as boa status says it.
  expect(renderNodes({ nodes: null, lastTickAt: since })).toBe(
    'not listed yet (the node pool has not answered since boa started; nothing is resized)\n',
  );
  expect(renderNodes({ nodes: [], lastTickAt: since })).toBe('no nodes\n');
});
