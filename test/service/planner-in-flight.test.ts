/**
 * While a plan is computed (milliseconds to seconds; minutes when the calculator hangs), the world
 * moves on: a budget change makes it wrong, the clock may step back, the operator asks for a plan, the
 * service stops. Each found in review of the planning path.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { GatedComputer } from './gated-computer.ts';
import { startService } from './harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
const services: Booted[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

async function boot(computer = new GatedComputer()) {
  const s = await startService({ computer, config: { priorRates: { cifar10: 8, bert: 1 } } });
  services.push(s);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 90 })).status).toBe(200);
  return { s, computer };
}

/** Lets the event loop run the planner's continuations. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('a plan computed while its inputs change', () => {
  it('is not put in force after a budget change; the plan for the new budget is', async () => {
    const { s, computer } = await boot();
    const before = s.service.state.plan!.row;
    computer.open = false;
    void s.service.planner.request('timer');
    expect(computer.held.map((h) => h.inputs.budget)).toEqual([90]);
    s.service.setBudget(9);
    computer.held.shift()!.go();
    await settle();
    // Made for 90, landed after the cut to 9: not in force, not stored.
    expect(s.service.state.plan!.row.id).toBe(before.id);
    expect(s.repo.latestPlan()?.id).toBe(before.id);
    expect(computer.held.map((h) => h.inputs.budget)).toEqual([9]);
    computer.held.shift()!.go();
    await s.service.planner.idle();
    expect(s.service.state.plan!.row.budget).toBe(9);
  });

  it('is put in force when the same budget is set again meanwhile (a config loop re-applying it)', async () => {
    const { s, computer } = await boot();
    const before = s.service.state.plan!.row.id;
    computer.open = false;
    void s.service.planner.request('timer');
    s.service.setBudget(90);
    computer.held.shift()!.go();
    await settle();
    expect(s.service.state.plan!.row.id).toBeGreaterThan(before);
    computer.held.shift()?.go();
    await s.service.planner.idle();
  });

  it('is put in force when only newer rates came meanwhile (a burst must not discard every plan)', async () => {
    const { s, computer } = await boot();
    const before = s.service.state.plan!.row.id;
    computer.open = false;
    void s.service.planner.request('timer');
    void s.service.planner.request('rates');
    computer.held.shift()!.go();
    await settle();
    expect(s.service.state.plan!.row.id).toBeGreaterThan(before);
    computer.held.shift()!.go();
    await s.service.planner.idle();
  });
});

describe('the planner', () => {
  it('plans on its timer after the clock stepped back', async () => {
    const { s, computer } = await boot();
    computer.open = true;
    const planned = () => s.repo.latestPlan()!.id;
    await s.ticks(1);
    const first = planned();
    s.clock.advance(-2 * 3600);
    const interval = s.service.deps.config.calculatorMinutes;
    await s.ticks(Math.ceil((interval * 60) / s.service.deps.config.tickSeconds) + 1);
    expect(planned()).toBeGreaterThan(first);
  });

  it('answers a recompute the calculator failed with 503, saying the plan in force is unchanged', async () => {
    const { s, computer } = await boot();
    const before = s.service.state.plan!.row.id;
    computer.open = false;
    const answer = s.request('POST', '/v1/plan/recompute');
    await settle();
    computer.held.shift()!.fail('worker exited with code 1');
    const res = await answer;
    expect(res.status).toBe(503);
    expect(res.body.error.message).toBe(
      'the calculator failed: worker exited with code 1; this request made no plan',
    );
    expect(s.service.state.plan!.row.id).toBe(before);
  });

  it("answers 503 when a recompute's own computation failed, though a timer's plan landed before it", async () => {
    const { s, computer } = await boot();
    computer.open = false;
    void s.service.planner.request('timer');
    const answer = s.request('POST', '/v1/plan/recompute');
    await settle();
    computer.held.shift()!.go(); // the timer's plan lands
    await settle();
    computer.held.shift()!.fail('worker exited with code 1'); // the recompute's own fails
    const res = await answer;
    expect(res.status).toBe(503);
    expect(res.body.error.message).toBe(
      'the calculator failed: worker exited with code 1; this request made no plan',
    );
  });

  it('shows a computation in flight in the status, and a stop ends a hung one', async () => {
    const { s, computer } = await boot();
    computer.open = false;
    void s.service.planner.request('timer');
    const status = (await s.request('GET', '/v1/status')).body;
    expect(status.plannerComputingSince).toBe(new Date(s.clock.now()).toISOString());
    // Never let through: the stop does not wait for it (it waited for the worker's timeout).
    services.splice(services.indexOf(s), 1);
    await s.close();
    expect(computer.held).toEqual([]);
  });
});
