/**
 * A job whose replicas boa stops still run within their grace holds their GPUs, whatever its state: the
 * dashboard listed only the running and waiting jobs, so a cancelled job's replica, paid and holding its
 * GPUs for the whole grace, had no job on the page to explain it (found in review). It is listed now,
 * with its state and the stopping note `boa jobs list` gives, until its replicas are gone; the API lists
 * such jobs with GET /v1/jobs?stopping=true.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { oneNodeLocalService } from '../../helpers/one-node-local-service.ts';
import { runStubbornJob } from '../../helpers/stubborn-job.ts';
import { until } from '../../helpers/until.ts';
import { startService } from '../../service/harness.ts';
import { listedJob, loadDashboardScript } from './load-app.ts';
import { describeJob } from '../../../src/cli/commands/jobs-wait.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

// Long enough for a refresh of the page and the API calls below within it on a loaded machine.
const GRACE_SECONDS = 8;

describe('the dashboard and a job whose replicas still stop', () => {
  it('lists a cancelled job whose replica runs on, with its GPUs and the stopping note, until it is gone', async () => {
    const { s, dataDir } = await oneNodeLocalService(startService, {
      graceSeconds: GRACE_SECONDS,
      prefix: 'boa-dash-stopping-',
      cleanups,
    });
    const { id } = await runStubbornJob(s, join(dataDir, 'a.pid'), 'stubborn');
    const width = s.service.job(id).width;
    expect(width).toBeGreaterThan(0);

    expect((await s.request('POST', `/v1/jobs/${id}/cancel`)).status).toBe(200);
    await until('the stop sent', async () => {
      const view = (await s.request('GET', `/v1/jobs/${id}`)).body;
      return typeof view.stopping?.killAt === 'string';
    });
    const view = (await s.request('GET', `/v1/jobs/${id}`)).body;
    expect(view.state).toBe('cancelled');
    // Running its replica still, the job is in neither the running nor the waiting list the page reads.
    expect((await s.request('GET', '/v1/jobs?state=waiting,running')).body.jobs).toEqual([]);
    const listed = (await s.request('GET', '/v1/jobs?stopping=true')).body.jobs;
    expect(listed.map((j: any) => [j.id, j.state, j.stopping?.gpus])).toEqual([[id, 'cancelled', width]]);
    expect((await s.request('GET', '/v1/jobs?stopping=true&state=running')).body.jobs).toEqual([]);

    const dash = loadDashboardScript(async (path, init) => s.app.request(path, init));
    await dash.refresh(s.token);
    const html = dash.element('active-jobs').innerHTML;
    const kill = view.stopping.killAt.replace(/\.\d{3}Z$/, 'Z');
    const gpus = `${width} GPU${width === 1 ? '' : 's'}`;
    expect(html).toContain(`<td>stubborn</td><td>bert</td><td>cancelled</td><td>0+${width} stopping</td>`);
    expect(html).toContain(
      `stopping: 1 replica still running, ${gpus} held (SIGKILL at ${kill} at the latest)</td>`,
    );
    // The log panel's end line for it, in the words `boa jobs logs -f` ends with (before: no note).
    const ended = `job ${id} (stubborn): cancelled, stopping: 1 replica still running, ${gpus} held (SIGKILL at ${kill} at the latest)`;
    expect(describeJob(view)).toBe(ended);
    expect(dash.describeJob(view)).toBe(ended);

    // The GPUs tile says what holds the GPUs paid and allocated to no job.
    const gpusTile = () =>
      /id="gpus-value">([^<]*)<\/div><div class="label">([^<]*)</
        .exec(dash.element('numbers').innerHTML)
        ?.slice(1);
    expect(gpusTile()).toEqual([
      expect.stringMatching(/^0 \/ \d+$/),
      `GPUs allocated / paid (${width} held by replicas still stopping)`,
    ]);

    // Once its replica is gone (SIGKILL at the end of its grace), the job leaves the table.
    await until(
      'its replica gone',
      async () => (await s.request('GET', `/v1/jobs/${id}`)).body.stopping === null,
      (GRACE_SECONDS + 10) * 1000,
    );
    await dash.refresh(s.token);
    expect(dash.element('active-jobs').innerHTML).toBe('<p>No job is waiting or running.</p>');
    expect(gpusTile()?.[1]).toBe('GPUs allocated / paid');
  }, 60_000);

  it('lists a running job with an older generation stopping even when it is not among the newest shown', () => {
    const dash = loadDashboardScript();
    const running = Array.from({ length: 20 }, (_, i) =>
      listedJob(i + 10, { state: 'running', width: 4, widths: [4] }),
    );
    const stopping = { replicas: 2, gpus: 8, killAt: null };
    // Rescaled from 12 GPUs to 4, submitted before the 20 newest running.
    const older = listedJob(3, { name: 'rescaled', state: 'running', width: 4, widths: [4], stopping });
    const ended = listedJob(5, { name: 'done-one', state: 'done', width: 0, stopping });
    dash.renderActiveJobs(running, [], { running: 21, waiting: 0 }, undefined, undefined, [
      older,
      ended,
      // A running job listed already is not listed twice.
      { ...running[0], stopping },
    ]);
    const html = dash.element('active-jobs').innerHTML;
    expect(html).toContain('<td>rescaled</td><td>cifar10</td><td>running</td><td>4+8 stopping</td>');
    expect(html).toContain('<td>done-one</td><td>cifar10</td><td>done</td><td>0+8 stopping</td>');
    expect(html).toContain('stopping: 2 replicas still running, 8 GPUs held (SIGTERM being sent)');
    expect(html.match(/<tr>/g)).toHaveLength(1 + 22);

    // The GPUs they hold, said on the GPUs tile: at least, with a full page of them.
    const view = {
      gpuHoursPerHour: 40,
      nodePricePerHour: null,
      control: null,
      window: { hours: 24, windowHours: 24 },
    };
    const status = {
      nodeGroup: { desiredNodes: 1, readyNodes: 1 },
      gpus: { allocated: 4, lent: 1, paid: 24 },
    };
    dash.renderNumbers(view, null, status, [older, ended], 20);
    expect(dash.element('numbers').innerHTML).toContain(
      'GPUs allocated / paid (1 more lent by the idle fill; 16 held by replicas still stopping)',
    );

    // A full page of them: more may be behind it, and the page says so.
    const many = Array.from({ length: 20 }, (_, i) =>
      listedJob(i + 100, { state: 'cancelled', width: 0, stopping }),
    );
    dash.renderActiveJobs([], [], { running: 0, waiting: 0 }, undefined, undefined, many);
    expect(dash.element('active-jobs').innerHTML).toContain(
      'the newest 20 jobs whose replicas still stop (how many in all is not known now)',
    );
    dash.renderNumbers(view, null, status, many, 20);
    expect(dash.element('numbers').innerHTML).toContain('at least 160 held by replicas still stopping');
  });

  it("says what a job placement holds back for stopping replicas waits for, in the CLI's words", () => {
    const dash = loadDashboardScript();
    const killAt = '2026-12-07T12:00:30.000Z';
    const waiting = listedJob(4, {
      name: 'next',
      waitingFor: 'stopping',
      heldBy: { jobs: [3], killAt },
    });
    dash.renderActiveJobs([], [waiting], { running: 0, waiting: 1 });
    expect(dash.element('active-jobs').innerHTML).toContain(
      'waits for GPUs stopping replicas of job 3 still hold (SIGKILL at 2026-12-07T12:00:30Z at the latest)',
    );
    // Followed in the log panel, as `boa jobs logs -f` says it.
    expect(dash.describeJob({ ...waiting, heldBy: undefined })).toBe(
      'job 4 (next): waiting for GPUs stopping replicas still hold',
    );
  });

  it('refuses stopping=false and stopping with another order, saying what is allowed', async () => {
    const s = await startService();
    cleanups.push(() => s.close());
    const no = await s.request('GET', '/v1/jobs?stopping=false');
    expect(no.status).toBe(400);
    expect(no.body.error.message).toContain('stopping takes only true (leave it out for every job)');
    const ended = await s.request('GET', '/v1/jobs?stopping=true&order=ended');
    expect(ended.status).toBe(400);
    expect(ended.body.error.message).toContain('it cannot be given with order=ended');
  });
});
