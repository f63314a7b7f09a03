/**
 * A tick decides again after a scale-in; the idle fill can lend a job GPUs in the first decision and
 * take them back in the next. A job whose allocation ends the tick where it began keeps its generation,
 * so its replicas are not restarted (found in review: generation 1 -> 3 on an unchanged allocation).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ServiceJob } from '../../src/service/jobs.ts';
import { TickUndo } from '../../src/service/tick-undo.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of cleanups.splice(0)) await close();
});

const running = (allocation: string[], generation: number) =>
  ({ allocation, width: allocation.length, generation, generationSince: 5, state: 'running' }) as ServiceJob;

describe('a job moved and moved back within one tick', () => {
  it('gets its generation back; a job that moved keeps its new one', () => {
    const undo = new TickUndo(0);
    const back = running(['a'], 1);
    const moved = running(['a'], 1);
    for (const job of [back, moved]) undo.note(job);
    Object.assign(back, { allocation: ['a', 'a', 'a', 'a'], width: 4, generation: 2, generationSince: 9 });
    Object.assign(back, { allocation: ['a'], width: 1, generation: 3, generationSince: 9 });
    Object.assign(moved, { allocation: ['b'], generation: 2, generationSince: 9 });
    undo.settleGenerations([back, moved]);
    expect([back.generation, back.generationSince]).toEqual([1, 5]);
    expect([moved.generation, moved.generationSince]).toEqual([2, 9]);
  });

  it('a job moved twice within one tick is one generation on', () => {
    const undo = new TickUndo(0);
    const job = running(['x'], 4);
    undo.note(job);
    Object.assign(job, { allocation: ['y'], generation: 5, generationSince: 9 });
    Object.assign(job, { allocation: ['z'], generation: 6, generationSince: 9 });
    undo.settleGenerations([job]);
    expect([job.generation, job.generationSince, job.allocation]).toEqual([5, 9, ['z']]);
  });

  it('a waiting job placed and then not is not started', () => {
    const undo = new TickUndo(0);
    const job = {
      allocation: [],
      width: 0,
      generation: 0,
      generationSince: 5,
      state: 'waiting',
      startedAt: null,
      epochStartedAt: null,
      epochGeneration: 0,
      epochTimedFromReport: true,
    } as unknown as ServiceJob;
    undo.note(job);
    Object.assign(job, {
      allocation: ['a'],
      width: 1,
      generation: 1,
      generationSince: 9,
      state: 'running',
      startedAt: 9,
      epochStartedAt: 9,
      epochGeneration: 1,
      epochTimedFromReport: false,
    });
    Object.assign(job, { allocation: [], width: 0, generation: 2, state: 'waiting' });
    undo.settleGenerations([job]);
    expect(job).toMatchObject({ generation: 0, state: 'waiting', startedAt: null, epochStartedAt: null });
    expect(job).toMatchObject({ epochGeneration: 0, epochTimedFromReport: true });
  });

  it('in the service: a scale-in tick restarts no job whose allocation it leaves as it was', async () => {
    // Budget 9 on nodes of 4: four 1-GPU jobs share local-1; a fifth is lent local-2's idle GPUs. Three
    // finish, the tick removes a node and decides again: the first job lent GPUs, then not.
    const boa = await startService({
      config: {
        priorRates: { deepspeech2: 2 },
        leaseSeconds: 86_400,
        local: { maxNodes: 2, bootSeconds: 0, releaseSeconds: 0 },
      },
    });
    cleanups.push(boa.close);
    expect((await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 9 })).status).toBe(200);
    await boa.service.planner.idle();
    const submit = async () =>
      (await boa.request('POST', '/v1/jobs', { class: 'deepspeech2' })).body.id as number;
    const first = [await submit(), await submit(), await submit(), await submit()];
    await boa.ticks(3);
    await submit();
    await boa.ticks(5);
    const jobs = () => [...boa.service.state.jobs.values()];
    const before = new Map(
      jobs().map((j) => [j.id, { allocation: [...j.allocation], generation: j.generation }]),
    );
    for (const id of first.slice(1)) boa.service.finishJob(id, 'done');
    await boa.ticks(1);
    const kept = jobs().filter((j) => before.get(j.id)?.allocation.join() === j.allocation.join());
    expect(kept.map((j) => j.id)).toContain(first[0]);
    for (const job of kept) expect(job.generation).toBe(before.get(job.id)?.generation);
  }, 60_000);
});
