/**
 * The active jobs' part says where each job queued for the budget stands and which start next (GET
 * /v1/jobs?order=queue): the list is the newest submitted, and under the default order (least work left
 * first) the job at its top could wait for hours while those below it started.
 */
import { afterEach, expect, it } from 'vitest';
import { startService } from '../../service/harness.ts';
import { QUEUE_CONFIG, queueMixedLongJobs } from '../../service/budget-queue-load.ts';
import { listedJob, loadDashboardScript } from './load-app.ts';

const services: Array<Awaited<ReturnType<typeof startService>>> = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

it("says each queued job's place in line and lists the next to start, in the queue's order", async () => {
  const s = await startService({ config: QUEUE_CONFIG });
  services.push(s);
  await queueMixedLongJobs(s);
  const queue = (await s.request('GET', '/v1/jobs?order=queue')).body.jobs;
  expect(queue.length).toBeGreaterThan(2);
  const dash = loadDashboardScript(async (path, init) => s.app.request(path, init));
  await dash.refresh(s.token);
  const html = dash.element('active-jobs').innerHTML;
  for (const job of queue)
    expect(html).toMatch(new RegExp(`>${job.name}<.*?queued for the budget, #${job.queuePlace} in line<`));
  const front = queue.map((j: any) => `#${j.queuePlace} job ${j.id} (${j.name}), ${j.class}`).join('; ');
  expect(html).toContain(`<p class="shown">Next to start as the budget allows: ${front}.</p>`);

  // A full page of the queue says it is the first of more; none queued, nothing said.
  const twenty = Array.from({ length: 20 }, (_, i) =>
    listedJob(i + 1, { waitingFor: 'budget', queuePlace: i + 1 }),
  );
  dash.renderActiveJobs([], twenty, { running: 0, waiting: 30 }, 'submitted', twenty);
  expect(dash.element('active-jobs').innerHTML).toContain(
    'Next to start as the budget allows (the first 20; all: boa jobs list --queue): #1 job 1, cifar10; ',
  );
  dash.renderActiveJobs(
    [],
    [listedJob(1, { waitingFor: 'nodes' })],
    { running: 0, waiting: 1 },
    'submitted',
    [],
  );
  expect(dash.element('active-jobs').innerHTML).not.toContain('Next to start');
  // A followed job's status line says its place too.
  expect(dash.describeJob({ id: 3, name: 'x', state: 'waiting', waitingFor: 'budget', queuePlace: 2 })).toBe(
    'job 3 (x): queued for the budget, #2 in line',
  );
});
