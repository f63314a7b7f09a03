/**
 * The idle fill (src/service/idle-fill.ts, core/exec/idle-fill.ts as in the simulator): a job whose
 * plan leaves GPUs of its node idle runs on them, keeps them across ticks, gives them back when another
 * job needs them, and the budget control books only its plan's width. On by default (`idleFill`,
 * since 2026-12-02, as the simulator's boa); `idleFill: false` keeps jobs at the plan's widths.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** One 4-GPU node at most, a budget whose plan runs deepspeech2 jobs on one GPU each. */
async function oneNode(config: Record<string, unknown> = {}) {
  const s = await startService({
    config: {
      priorRates: { deepspeech2: 2 },
      // The jobs here never poll: no lease runs out.
      leaseSeconds: 86_400,
      local: { maxNodes: 1, bootSeconds: 90, releaseSeconds: 30 },
      ...config,
    },
  });
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 9 })).status).toBe(200);
  await s.service.planner.idle();
  const submit = async () =>
    (await s.request('POST', '/v1/jobs', { class: 'deepspeech2' })).body.id as number;
  const job = async (id: number) => {
    const body = (await s.request('GET', `/v1/jobs/${id}`)).body;
    return { ...body, planned: body.widths?.[body.statEpoch] as number };
  };
  return { s, submit, job };
}

describe('the idle fill', () => {
  it('widens a job onto its node, keeps it there across ticks, books the plan, and gives way', async () => {
    const { s, submit, job } = await oneNode();
    const first = await submit();
    await s.ticks(3); // the node boots
    let a = await job(first);
    expect(a.state).toBe('running');
    expect(a.planned).toBe(1);
    // deepspeech2 runs 2.2x as fast on 4 GPUs as on 1, with hours of work left: the node's 4 GPUs.
    expect(a.width).toBe(4);
    const generation = a.generation;
    // Booked at the plan's width, and the node count is the plan's.
    expect(s.service.state.allocatedGpus).toBe(1);
    expect((await s.request('GET', '/v1/status')).body.nodeGroup.desiredNodes).toBe(1);
    await s.ticks(10);
    a = await job(first);
    // Kept across ticks: no restart each tick.
    expect(a.width).toBe(4);
    expect(a.generation).toBe(generation);
    // The ledger's allocated: the plan's width, not the 4 GPUs run; the plan expects nothing more.
    const samples = s.service.deps.repo.ledger.allocationSince(0).filter((x) => x.to > x.from);
    expect(samples.length).toBeGreaterThanOrEqual(10);
    for (const sample of samples.slice(-10)) expect(sample.gpus).toBe(1);
    const state = s.service.state;
    expect(state.intervalPlan?.plannedGpus).toBe(state.plan?.row.predictedGpuHoursPerHour);

    // A second job fits only on the GPUs lent (the group's one node): the first gives them back.
    const second = await submit();
    await s.ticks(1);
    a = await job(first);
    const b = await job(second);
    expect(b.state).toBe('running');
    expect(b.planned).toBe(1);
    expect(a.width).toBeLessThan(4);
    expect(a.width + b.width).toBeLessThanOrEqual(4);
    expect(a.generation).toBe(generation + 1);
    expect(s.service.state.allocatedGpus).toBe(2);
    expect(s.service.state.nodes).toHaveLength(1);
  });

  it('is on by default; idleFill: false keeps jobs at the plan width', async () => {
    for (const [idleFill, width] of [
      [undefined, 4],
      [false, 1],
    ] as const) {
      const { s, submit, job } = await oneNode({ idleFill });
      const first = await submit();
      await s.ticks(3);
      const a = await job(first);
      expect(a.state).toBe('running');
      expect(a.width).toBe(width);
    }
  });
});
