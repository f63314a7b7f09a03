/**
 * The tables in node (load-app.ts): the resizes, the nodes, the running and waiting jobs (their widths,
 * the queue's order, which open a log, and the log's text) and the failed jobs.
 */
import { describe, expect, it } from 'vitest';
import { servicesClosedAfterEach } from './app-service.ts';
import { listedJob, loadDashboardScript } from './load-app.ts';

const service = servicesClosedAfterEach();

describe('the resizes', () => {
  it('say when each was asked for in UTC, as the CLI does', () => {
    const dash = loadDashboardScript();
    dash.renderResizes([{ at: '2026-11-01T12:00:05.250Z', target: 3, status: 'done' }]);
    expect(dash.element('resizes').innerHTML).toContain(
      '<tr><td><time datetime="2026-11-01T12:00:05Z">2026-11-01T12:00:05Z</time></td><td>3</td><td>done</td></tr>',
    );
  });
});

describe('the nodes table', () => {
  it('counts as booting only nodes on their way up; others not ready say why', async () => {
    const s = await service();
    const status = (await s.request('GET', '/v1/status')).body;
    // What /v1/status answers with an unhealthy node (GPUs gone) and one cordoned for removal (the
    // local pool only boots: the reasons come from the EKS pool, docs/nodes.md).
    status.nodeGroup = {
      ...status.nodeGroup,
      desiredNodes: 5,
      actualNodes: 5,
      readyNodes: 1,
      notReady: { booting: 1, registering: 1, 'no-gpus': 1, cordoned: 1 },
    };
    const dash = loadDashboardScript();
    dash.renderTables(null, status);
    const html = dash.element('nodes').innerHTML;
    const cells = (row: string) => [...row.matchAll(/<t[hd]>([^<]*)<\/t[hd]>/g)].map((m) => m[1]);
    const [head, row] = html.split('</tr>').map(cells);
    const shown = Object.fromEntries(head!.map((h, i) => [h, row![i]]));
    expect(shown).toMatchObject({
      desired: '5',
      ready: '1',
      booting: '2',
      'not ready': '1 no-gpus, 1 cordoned',
      'replaced group': '-',
    });
  });

  it("shows a replaced group's nodes still paid, as boa status does", async () => {
    const s = await service();
    const status = (await s.request('GET', '/v1/status')).body;
    status.nodeGroup = { ...status.nodeGroup, replaced: [{ name: 'gpu-old', nodes: 2, paidGpus: 8 }] };
    const dash = loadDashboardScript();
    dash.renderTables(null, status);
    const html = dash.element('nodes').innerHTML;
    expect(html).toContain('<th>replaced group</th>');
    expect(html).toContain('<td>gpu-old: 2 on their way out</td>');
  });
});

describe("a job's log", () => {
  it('keeps the last part of a long log, from a whole line', () => {
    const dash = loadDashboardScript();
    expect(dash.keepTail('a\nb\nc\n', 100)).toBe('a\nb\nc\n');
    // Cut where a line starts: that line is kept; cut within one: it goes.
    expect(dash.keepTail('aa\nbb\ncc\n', 6)).toBe('bb\ncc\n');
    expect(dash.keepTail('aa\nbb\ncc\n', 5)).toBe('cc\n');
    expect(dash.keepTail('x'.repeat(10), 4)).toBe('xxxx');
  });

  it('shows a progress bar as a terminal does: what follows its last \\r', () => {
    const dash = loadDashboardScript();
    expect(dash.redrawn('epoch 1\nprogress 10%\rprogress 20%\rprogress 30%\nepoch 2\n')).toBe(
      'epoch 1\nprogress 30%\nepoch 2\n',
    );
    expect(dash.redrawn('windows line\r\nnext\r\n')).toBe('windows line\r\nnext\r\n');
    // A \r at the end of what came so far: its line is redrawn by what comes next.
    expect(dash.redrawn('progress 10%\r')).toBe('progress 10%\r');
  });

  it("says a followed job's lent GPUs apart from its plan's, as boa jobs show does", () => {
    const dash = loadDashboardScript();
    const running = { id: 1, name: 'j1', state: 'running', width: 9, lentGpus: 3 };
    expect(dash.describeJob(running)).toBe(
      'job 1 (j1): running on 9 GPUs (3 lent by the idle fill, not booked)',
    );
    expect(dash.describeJob({ ...running, lentGpus: 0 })).toBe('job 1 (j1): running on 9 GPUs');
    // A service too old to say lends nothing as far as the page knows.
    expect(dash.describeJob({ ...running, lentGpus: undefined })).toBe('job 1 (j1): running on 9 GPUs');
  });

  it("says the GPUs a job's stopping replicas still hold, and when SIGKILL comes, as boa jobs list does", () => {
    const dash = loadDashboardScript();
    // Rescaled from 4 GPUs to 2: its old generation's replica runs on within its grace.
    const stopping = { replicas: 1, gpus: 4, killAt: '2026-12-07T08:44:48.120Z' };
    const rescaled = listedJob(7, { name: 'j7', state: 'running', width: 2, widths: [2], stopping });
    dash.renderActiveJobs([rescaled, listedJob(8, { state: 'running', width: 2, stopping: null })], [], {
      running: 2,
      waiting: 0,
    });
    const html = dash.element('active-jobs').innerHTML;
    expect(html).toContain('<td>2+4 stopping</td>');
    expect(html).toContain(
      'stopping: 1 replica still running, 4 GPUs held (SIGKILL at 2026-12-07T08:44:48Z at the latest)',
    );
    expect(html.match(/stopping/g)).toHaveLength(2);
    dash.renderActiveJobs([{ ...rescaled, stopping: { ...stopping, killAt: null } }], [], {
      running: 1,
      waiting: 0,
    });
    expect(dash.element('active-jobs').innerHTML).toContain('4 GPUs held (SIGTERM being sent)');
  });

  it("notes a running job's width as boa jobs list does: narrowed and why, lent apart, a new epoch's width to come", () => {
    const dash = loadDashboardScript();
    const job = (id: number, fields: Record<string, unknown>) => ({
      id,
      name: `j${id}`,
      class: 'cifar10',
      state: 'running',
      width: 9,
      statEpoch: 1,
      widths: [2, 9],
      restarts: 0,
      startedAt: 0,
      submittedAt: 0,
      workload: null,
      ...fields,
    });
    dash.renderActiveJobs(
      [
        job(1, { width: 2, narrowedBy: 'budget' }),
        job(2, { width: 12, lentGpus: 3 }),
        job(3, { width: 2, epochAfterLastTick: true }),
        job(4, { width: 4, lentGpus: 2, epochAfterLastTick: true }),
        job(5, { width: 2, epochAfterLastTick: true, narrowedBy: 'budget' }),
      ],
      [],
      { running: 5, waiting: 0 },
    );
    const html = dash.element('active-jobs').innerHTML;
    expect(html).toContain('on 2 of its plan&#39;s 9 GPUs (the budget&#39;s ceiling)');
    expect(html).toContain(
      'on 12 GPUs: its plan&#39;s 9 and 3 lent by the idle fill (idle on its nodes, not booked)',
    );
    expect(html).toContain(
      'on 2 GPUs, epoch 1&#39;s plan; its plan gives 9 for epoch 2 from the next tick, as the budget and nodes allow',
    );
    expect(html).toContain(
      'on 4 GPUs: epoch 1&#39;s plan&#39;s 2 and 2 lent by the idle fill (idle on its nodes, not booked); its plan gives 9',
    );
    // Held by the budget: that reason, not a width the next tick would not give.
    expect(html.match(/from the next tick/g)).toHaveLength(2);
  });

  it("says the order jobs queued for the budget start in, which is not the list's", async () => {
    for (const queueOrder of ['least-work-left', 'submitted']) {
      const s = await service({ queueOrder });
      // A budget of one node's 4 GPUs and 8 jobs: 4 run, the others queue for the budget.
      await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 4 });
      await s.service.planner.idle();
      for (let i = 0; i < 8; i++) await s.request('POST', '/v1/jobs', { class: 'cifar10', name: `j${i}` });
      await s.ticks(3);
      const waiting = (await s.request('GET', '/v1/jobs?state=waiting')).body.jobs;
      expect(waiting.map((j: any) => j.waitingFor)).toContain('budget');
      const dash = loadDashboardScript(async (path, init) => s.app.request(path, init));
      await dash.refresh(s.token);
      expect(dash.element('active-jobs').innerHTML).toContain(
        queueOrder === 'submitted'
          ? '<p class="shown">Jobs queued for the budget start oldest first.</p>'
          : '<p class="shown">Jobs queued for the budget start least expected work left first (by their class&#39;s profile; any waiting past the queue&#39;s bound, a day by default, go first), not in the order listed.</p>',
      );
    }
    // Of the waiting jobs not listed (the newest 20 are), the older come first; none queued: nothing said.
    const dash = loadDashboardScript();
    const job = (id: number, waitingFor: string) => listedJob(id, { waitingFor });
    dash.renderActiveJobs([], [job(30, 'budget')], { running: 0, waiting: 25 }, 'submitted');
    expect(dash.element('active-jobs').innerHTML).toContain(
      'Jobs queued for the budget start oldest first: the 24 older waiting jobs not listed come before these.',
    );
    dash.renderActiveJobs([], [job(30, 'nodes')], { running: 0, waiting: 1 }, 'submitted');
    expect(dash.element('active-jobs').innerHTML).not.toContain('queued for the budget start');
  });

  it('opens only for a job boa runs: its id is a button, a self-launched one plain', () => {
    const dash = loadDashboardScript();
    const job = (id: number, workload: unknown) => ({
      id,
      name: `j${id}`,
      class: 'cifar10',
      state: 'running',
      width: 4,
      statEpoch: 0,
      widths: [4],
      restarts: 0,
      startedAt: 0,
      submittedAt: 0,
      workload,
    });
    dash.renderActiveJobs([job(1, { command: ['python3'] }), job(2, null)], [], { running: 2, waiting: 0 });
    const html = dash.element('active-jobs').innerHTML;
    expect(html).toContain('<button type="button" class="job-log" data-job="1"');
    expect(html).not.toContain('data-job="2"');
    // Its statistical epoch counted from 1, as the CLI shows it: the first of one.
    expect(html).toContain('1 of 1');
    expect(html).not.toContain('0 of 1');
  });
});

describe('the failed jobs', () => {
  const failed = (id: number, fields: Record<string, unknown>) => ({
    id,
    name: `j${id}`,
    class: 'cifar10',
    state: 'failed',
    finishedAt: '2026-11-01T12:00:00.000Z',
    exitCode: 7,
    failureReason: 'rank 0 exited 7 (after 3 restarts)',
    failedRank: 0,
    workload: { command: ['python3'] },
    ...fields,
  });

  it("say why each failed and name the failed rank's output; only rank 0's opens below", () => {
    const dash = loadDashboardScript();
    dash.renderFailedJobs(
      [
        failed(1, {}),
        failed(2, { failedRank: 1, failureReason: 'rank 1 exited 7 (after 3 restarts)' }),
        failed(3, {
          name: '<b>',
          state: 'lost',
          workload: null,
          exitCode: null,
          failureReason: 'no poll for 600 s',
        }),
      ],
      7,
    );
    const html = dash.element('failed-jobs').innerHTML;
    const rows = html.split('<tr>').slice(2);
    expect(rows[0]).toContain('data-job="1"');
    expect(rows[0]).toContain(
      '<td><time datetime="2026-11-01T12:00:00Z">2026-11-01T12:00:00Z</time></td><td>exit 7: rank 0 exited 7 (after 3 restarts)</td>',
    );
    expect(rows[0]).toContain('<code>boa jobs logs 1</code>');
    // Rank 1 failed: the panel shows rank 0's output, so the command names rank 1 instead.
    expect(rows[1]).not.toContain('data-job="2"');
    expect(rows[1]).toContain('<code>boa jobs logs 2 --rank 1</code>');
    expect(rows[2]).toContain('<td>&#60;b&#62;</td>');
    expect(rows[2]).toContain('<td>no poll for 600 s</td><td>self-launched: its own logs</td>');
    expect(html).toContain('the 3 that ended last of 7; ');
    dash.renderFailedJobs([], 0);
    expect(dash.element('failed-jobs').innerHTML).toBe('<p>No job has failed.</p>');
  });

  it('are those that ended last, newest first, not the newest submitted', async () => {
    const s = await service();
    const submit = async (name: string) =>
      (await s.request('POST', '/v1/jobs', { class: 'cifar10', name })).body.id;
    const long = await submit('three-day');
    const later: number[] = [];
    for (const name of ['b', 'c', 'd', 'e', 'f']) later.push(await submit(name));
    // The five submitted after it fail first; it fails now (found in review: it was not listed).
    for (const id of [...later, long]) {
      s.clock.advance(60);
      s.service.finishJob(id, 'failed', undefined, { exitCode: 1, reason: 'rank 0 exited 1' });
    }
    const dash = loadDashboardScript(async (path, init) => s.app.request(path, init));
    await dash.refresh(s.token);
    // Self-launched jobs: the id is the row's first cell, no button.
    const shown = [...dash.element('failed-jobs').innerHTML.matchAll(/<tr><td>(\d+)<\/td>/g)].map((m) =>
      Number(m[1]),
    );
    expect(shown).toEqual([long, ...later.slice(1).reverse()]);
    expect(dash.element('failed-jobs').innerHTML).toContain('the 5 that ended last of 6; ');
  });
});
