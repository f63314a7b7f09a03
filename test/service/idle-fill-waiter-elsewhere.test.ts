/**
 * A job that comes while another job's cancelled replica still stops on a node of its width waits for
 * that node (waitingFor stopping): the GPUs the idle fill lent a job on another node stay lent. Before,
 * the give-back counted the newcomer waiting for stopping GPUs as placed only once the lent GPUs were
 * taken back, so every such wait narrowed the lender (a restart) though the newcomer started on the
 * other node all the same.
 */
import { afterEach, expect, it } from 'vitest';
import { graceService } from './grace-service.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

it('keeps lent GPUs when the job that comes waits for stopping GPUs on another node', async () => {
  const { s, executor, tick, submit, view } = await graceService(cleanups, {
    maxNodes: 2,
    priorRates: { deepspeech2: 2, bert: 1 },
  });
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 9 })).status).toBe(200);
  await s.service.planner.idle();
  // The lender: deepspeech2 planned on 1 GPU, lent the rest of its node.
  const lender = await submit('deepspeech2');
  for (let i = 0; i < 4; i++) await tick();
  const other = await submit('bert');
  for (let i = 0; i < 5; i++) await tick();
  expect(s.service.job(lender)).toMatchObject({ state: 'running', idleFillGpus: 3 });
  const [lenderNode] = executor.nodesOf(lender);
  const [otherNode] = executor.nodesOf(other);
  expect(otherNode).not.toBe(lenderNode);
  expect(s.service.job(other).allocation).toEqual([otherNode, otherNode, otherNode, otherNode]);
  const lent = { ...s.service.job(lender), allocation: [...s.service.job(lender).allocation] };

  // The other job cancelled: its replica holds its node through its grace; a job of its width comes.
  expect((await s.request('POST', `/v1/jobs/${other}/cancel`)).status).toBe(200);
  const next = await submit('bert');
  for (let i = 0; i < 3; i++) {
    await tick();
    expect(await view(next)).toMatchObject({ state: 'waiting', waitingFor: 'stopping' });
    expect((await view(next)).heldBy.jobs).toEqual([other]);
    // Without the fix: narrowed to its planned 1 GPU in the first of these ticks (generation 2).
    expect(s.service.job(lender)).toMatchObject({
      generation: lent.generation,
      allocation: lent.allocation,
      idleFillGpus: 3,
    });
  }
  executor.end(other);
  for (let i = 0; i < 2; i++) await tick();
  expect(await view(next)).toMatchObject({ state: 'running', width: 4, restarts: 0 });
  expect(executor.nodesOf(next)).toEqual([otherNode]);
  expect(s.service.job(lender)).toMatchObject({ generation: lent.generation, idleFillGpus: 3 });
});
