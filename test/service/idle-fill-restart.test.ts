/**
 * The idle fill's lent GPUs across a restart (kill -9: close() writes nothing, the service re-opens the
 * same data dir): the widened job keeps them, and the ledger goes on booking the plan's width, the
 * downtime's sample included. Before jobs.idle_fill_gpus a job the service restarted under within its
 * class's rescale time of the widening was placed back at 1 GPU (a restart), widened again once that
 * time had passed (a second one), and the downtime's sample booked 4 GPUs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, startService } from './harness.ts';

const dirs: string[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * One 4-GPU node at most, a plan that runs deepspeech2 jobs on one GPU each; the fill on unless told.
 * Ticks of 10 s, within deepspeech2's rescale time (30 s), during which the fill does not widen a job
 * it just moved.
 */
async function boot(dataDir: string, clock: ManualClock, idleFill = true) {
  const s = await startService({
    dataDir,
    clock,
    config: {
      priorRates: { deepspeech2: 2 },
      // The job never polls: no lease runs out.
      leaseSeconds: 86_400,
      local: { maxNodes: 1, bootSeconds: 90, releaseSeconds: 30 },
      idleFill,
      tickSeconds: 10,
    },
  });
  cleanups.push(s.close);
  return s;
}

/** A service whose one job the fill widened 1 -> 4 at its last tick, stopped as by kill -9. */
async function widenedThenKilled() {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-fill-restart-'));
  dirs.push(dataDir);
  const clock = new ManualClock();
  const s = await boot(dataDir, clock);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 9 })).status).toBe(200);
  await s.service.planner.idle();
  const id = (await s.request('POST', '/v1/jobs', { class: 'deepspeech2' })).body.id as number;
  // The node boots (90 s), the job starts and is widened at once.
  for (let i = 0; i < 20 && s.service.state.jobs.get(id)?.allocation.length !== 4; i++) await s.ticks(1);
  const before = (await s.request('GET', `/v1/jobs/${id}`)).body;
  expect(before.widths[before.statEpoch]).toBe(1);
  expect(before.width).toBe(4);
  expect(s.service.state.jobs.get(id)?.idleFillGpus).toBe(3);
  const killedAt = s.repo.ledger.lastAllocationTo() as number;
  await s.close();
  return { dataDir, clock, id, generation: before.generation as number, killedAt };
}

describe('the idle fill across a restart', () => {
  it('keeps the widened job on its 4 GPUs, same generation, and books the plan width of 1', async () => {
    const { dataDir, clock, id, generation, killedAt } = await widenedThenKilled();
    // Back within the rescale time of the widening (the tick's 10 s after it).
    const s = await boot(dataDir, clock);
    expect(s.service.state.jobs.get(id)?.idleFillGpus).toBe(3);
    // What the downtime's sample will book: the plan's width.
    expect(s.service.state.allocatedGpus).toBe(1);
    // Past the rescale time: where the job would have been widened again.
    await s.ticks(6);

    const after = (await s.request('GET', `/v1/jobs/${id}`)).body;
    expect(after.state).toBe('running');
    expect(after.widths[after.statEpoch]).toBe(1);
    expect(after.width).toBe(4);
    // Not placed back at 1 GPU and widened again: no new generation, no restart.
    expect(after.generation).toBe(generation);
    expect(s.service.state.jobs.get(id)?.idleFillGpus).toBe(3);
    expect(s.service.state.allocatedGpus).toBe(1);
    const samples = s.repo.ledger.allocationSince(killedAt).filter((x) => x.to > x.from);
    // The downtime's sample and one per tick since.
    expect(samples.length).toBeGreaterThanOrEqual(6);
    expect(samples[0]?.from).toBe(killedAt);
    for (const sample of samples) expect(sample.gpus).toBe(1);
  });

  it('restarted with the fill off: the job runs at its plan width and has no GPUs lent, stored too', async () => {
    const { dataDir, clock, id, generation } = await widenedThenKilled();
    const s = await boot(dataDir, clock, false);
    expect(s.service.state.allocatedGpus).toBe(1);
    await s.ticks(2);
    const job = s.service.state.jobs.get(id);
    expect(job?.allocation).toHaveLength(1);
    expect(job?.generation).toBe(generation + 1);
    expect(job?.idleFillGpus).toBe(0);
    expect(s.repo.getJob(id)?.idleFillGpus).toBe(0);
    // Its end gives back the GPU booked for it, no more.
    s.service.finishJob(id, 'done');
    expect(s.service.state.allocatedGpus).toBe(0);
  });
});
