/**
 * A calculator that answers garbage (a solver's bug, a worker gone wrong): the plan is not put in force
 * nor stored, the scheduler keeps deciding on the last good plan, and the status says what was wrong.
 * Before, a plan of NaN widths was stored and followed: every job waited for GPUs, and nothing said why.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PlanResult } from '../../../src/service/calculator/compute.ts';
import type { MixedPlan } from '../../../src/core/plan.ts';
import { startService } from '../harness.ts';
import { SpoilingComputer } from './spoiling-computer.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
const services: Booted[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

/** A service on the local pool of at most 4 nodes of 4 GPUs, planned at a budget of 9. */
async function boot() {
  const computer = new SpoilingComputer();
  const s = await startService({
    computer,
    config: {
      gpusPerNode: 4,
      priorRates: { cifar10: 8, bert: 1 },
      local: { maxNodes: 4, bootSeconds: 0, releaseSeconds: 0 },
    },
  });
  services.push(s);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 9 })).status).toBe(200);
  await s.service.planner.idle();
  await s.ticks(1);
  return { s, computer };
}

/** The plan with every class's widths mapped. */
function mapWidths(plan: MixedPlan, map: (width: number) => number): MixedPlan {
  return Object.fromEntries(
    Object.entries(plan).map(([name, shares]) => [
      name,
      shares.map((s) => ({ share: s.share, widths: s.widths.map(map) })),
    ]),
  );
}

const SPOILED: Array<[string, (r: PlanResult) => PlanResult, RegExp]> = [
  [
    'NaN widths',
    (r) => ({ ...r, plan: mapWidths(r.plan, () => Number.NaN) }),
    /width NaN is not one it can get/,
  ],
  [
    'widths wider than the node group (16 GPUs)',
    (r) => ({ ...r, plan: mapWidths(r.plan, () => 32) }),
    /width 32 is not one it can get \(1, 2, .*, 16\)/,
  ],
  ['no widths at all', (r) => ({ ...r, plan: {} }), /class \w+ has no widths/],
  [
    'shares that do not add up to 1',
    (r) => ({ ...r, plan: { ...r.plan, cifar10: [{ share: 0.5, widths: r.plan.cifar10![0]!.widths }] } }),
    /class cifar10's shares add up to 0.5, not 1/,
  ],
  [
    'a predicted spend over the budget',
    (r) => ({ ...r, value: { ...r.value, gpuHoursPerHour: 10 * r.value.gpuHoursPerHour } }),
    /it spends [\d.]+ GPU-hours per hour, over the [\d.]+ it was given/,
  ],
  [
    'a NaN predicted JCT',
    (r) => ({ ...r, value: { ...r.value, avgJctSeconds: Number.NaN } }),
    /its predicted average JCT is NaN seconds/,
  ],
];

describe('a plan the calculator spoiled', () => {
  for (const [what, spoil, said] of SPOILED) {
    it(`with ${what} is not put in force; the last good plan is, and the status says why`, async () => {
      const { s, computer } = await boot();
      const good = s.service.state.plan!.row;
      computer.spoil = spoil;
      const answer = await s.request('POST', '/v1/plan/recompute');
      expect(answer.status).toBe(503);
      expect(answer.body.error.message).toMatch(said);
      expect(s.service.state.plan!.row.id).toBe(good.id);
      expect(s.repo.latestPlan()!.id).toBe(good.id);
      expect((await s.request('GET', '/v1/status')).body.plannerError).toMatch(said);
    }, 60_000);
  }

  it('leaves jobs running on the last good plan', async () => {
    const { s, computer } = await boot();
    computer.spoil = (r) => ({ ...r, plan: mapWidths(r.plan, () => Number.NaN) });
    // A budget change asks for a plan at once; the spoiled one comes back.
    s.service.setBudget(10);
    await s.service.planner.idle();
    const { id } = (await s.request('POST', '/v1/jobs', { class: 'cifar10' })).body;
    await s.ticks(3);
    const job = (await s.request('GET', `/v1/jobs/${id}`)).body;
    expect(job.state).toBe('running');
    expect(job.widths.every((w: number) => w >= 1 && w <= 16)).toBe(true);
    // The next sound plan is put in force and clears the error.
    computer.spoil = undefined;
    expect((await s.request('POST', '/v1/plan/recompute')).status).toBe(200);
    expect((await s.request('GET', '/v1/status')).body.plannerError).toBeNull();
  }, 60_000);
});
