/**
 * `boa jobs show`: state, width, generation, epoch, cost and command, the local logs folder only for a
 * service of this data dir, and the note on a job done without reporting progress.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';
import { cleanups, runCleanups } from './cleanups.ts';

afterEach(runCleanups);

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa jobs', { timeout: 180_000 }, () => {
  it('shows one job: state, width and generation, epoch, its command and the local logs folder', async () => {
    const s = await startCliService({ config: { local: { bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const { body } = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'r18' });
    await s.ticks(3);
    const job = (await s.request('GET', `/v1/jobs/${body.id}`)).body;
    expect(job.generation).toBeGreaterThan(0);
    // The executor's log folders, as a local service writes them under its data dir.
    const dataDir = join(s.cwd, 'data');
    for (const generation of ['1', String(job.generation)]) {
      mkdirSync(join(dataDir, 'jobs', String(body.id), generation), { recursive: true });
    }
    // The data dir named, as a local service's user does (BOA_DATA_DIR) or its token file proves it.
    const show = await s.boa(['jobs', 'show', String(body.id)], { BOA_DATA_DIR: dataDir });
    expect(show.stderr).toBe('');
    expect(show.status).toBe(0);
    const lines = Object.fromEntries(
      show.stdout
        .trimEnd()
        .split('\n')
        .map((line) => [
          line.split(/\s{2,}/)[0],
          line
            .split(/\s{2,}/)
            .slice(1)
            .join('  '),
        ]),
    );
    expect(lines).toMatchObject({
      job: `${body.id} r18 (cifar10)`,
      state: 'running',
      GPUs: `${job.width}, generation ${job.generation}`,
      'statistical epoch': '1 of 8',
      restarts: '0',
      command: 'none: self-launched (it polls its allocation)',
      logs: `${join(dataDir, 'jobs', String(body.id), String(job.generation))}/<rank>.log`,
    });
    expect(job.width).toBeGreaterThan(0);
    // What it cost the budget so far, in GPU-hours and at the node's price, as the API books it.
    expect(lines['GPU-hours']).toBe(
      `${job.gpuHours.toFixed(2)} booked to the budget (lent GPUs not counted, about $${job.dollars.toFixed(2)})`,
    );
    // No logs line for a service that is not local to this machine's data dir.
    const elsewhere = await s.boa(['jobs', 'show', String(body.id)], { BOA_DATA_DIR: join(s.cwd, 'none') });
    expect(elsewhere.stdout).not.toMatch(/^logs/m);
    // Ended, its generation went up as it stopped: none ran that one, so show gives none.
    expect((await s.request('POST', `/v1/jobs/${body.id}/cancel`)).status).toBe(200);
    const ended = await s.boa(['jobs', 'show', String(body.id)]);
    expect(ended.stdout).toMatch(/^GPUs\s+0$/m);
    const missing = await s.boa(['jobs', 'show', '99']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe('boa: job 99 not found (see boa jobs list)\n');
  });

  it("names no logs folder from the CLI's own ./data when the token did not come from that data dir", async () => {
    const s = await startCliService({ config: { local: { bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const { body } = await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    await s.ticks(3);
    const { generation } = (await s.request('GET', `/v1/jobs/${body.id}`)).body;
    expect(generation).toBeGreaterThan(0);
    // Another local service's data dir where the CLI runs (job ids start at 1 on every service): its
    // job of this id has logs. The token came from BOA_TOKEN, so nothing ties ./data to this service.
    mkdirSync(join(s.cwd, 'data', 'jobs', String(body.id), String(generation)), { recursive: true });
    const show = await s.boa(['jobs', 'show', String(body.id)]);
    expect(show.stderr).toBe('');
    expect(show.status).toBe(0);
    expect(show.stdout).toMatch(/^GPUs\s/m);
    expect(show.stdout).not.toMatch(/^logs\s/m);
  });

  it('notes a job done without ever reporting progress, in show and list; one that reported has none', async () => {
    const s = await startCliService({ config: { local: { bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const silent = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'silent' })).body;
    const told = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'told' })).body;
    const rescaled = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'rescaled' })).body;
    await s.ticks(3);
    // The clients' first report, epoch 0 as soon as they run: progress, though no epoch went by.
    const report = await s.request('POST', `/v1/jobs/${told.id}/progress`, { statEpoch: 0 }, told.token);
    expect(report.status).toBe(200);
    // Rescaled before its client's first report (as a tick does: a new generation, its epoch's clock
    // kept), it reports epoch 0 from the new generation, which moves neither the epoch nor its clock.
    const job = s.service.state.jobs.get(rescaled.id)!;
    job.generation += 1;
    s.service.deps.repo.saveJobState(job);
    const late = { statEpoch: 0, generation: job.generation };
    expect((await s.request('POST', `/v1/jobs/${rescaled.id}/progress`, late, rescaled.token)).status).toBe(
      200,
    );
    for (const job of [silent, told, rescaled])
      expect((await s.request('POST', `/v1/jobs/${job.id}/complete`, undefined, job.token)).status).toBe(200);
    const silentView = (await s.request('GET', `/v1/jobs/${silent.id}`)).body;
    expect(silentView).toMatchObject({ reportedProgress: false, lastReportAt: null });
    for (const job of [told, rescaled])
      expect((await s.request('GET', `/v1/jobs/${job.id}`)).body).toMatchObject({
        reportedProgress: true,
        lastReportAt: new Date(s.clock.t).toISOString(),
      });
    const show = await s.boa(['jobs', 'show', 'silent']);
    expect(show.stdout).toMatch(/^state\s+done: ended without reporting progress$/m);
    expect(show.stdout).toMatch(/^last report\s+none$/m);
    for (const name of ['told', 'rescaled']) {
      const shown = (await s.boa(['jobs', 'show', name])).stdout;
      // Done after reporting epoch 0 alone: the epoch shown is that report's, and the note says so.
      expect(shown).toMatch(/^state\s+done: last reported epoch 1 of \d+$/m);
      expect(shown).toMatch(/^last report\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    }
    const list = (await s.boa(['jobs', 'list'])).stdout.split('\n');
    expect(list.find((line) => line.includes('silent'))).toMatch(/ended without reporting progress$/);
    for (const name of ['told', 'rescaled'])
      expect(list.find((line) => line.includes(name))).not.toContain('without reporting');
  });
});
