/**
 * What the operator is told when the calculator fails: once, as an error, while the same failure
 * repeats at every timer run and every submission that moves the rates; once more when plans come
 * back; and on /metrics, boa_plan_failures_total counting each (before, nothing on /metrics showed a
 * calculator down). A stop that ends a computation is no failure. Before, a calculator down for a day logged 96
 * errors with their stacks (one a timer run), more under submissions, and every stop during a
 * computation logged "plan failed".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { captureLogs } from '../../cloud/fake-time.ts';
import { GatedComputer } from '../gated-computer.ts';
import { startService } from '../harness.ts';
import { SpoilingComputer } from './spoiling-computer.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
const services: Booted[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

async function boot(computer: SpoilingComputer | GatedComputer) {
  const logs = captureLogs();
  const s = await startService({
    computer,
    logger: logs.logger,
    config: { priorRates: { cifar10: 8, bert: 1 }, calculatorMinutes: 15 },
  });
  services.push(s);
  return { s, logs };
}

/** The log's plan_failed entries at error level (50 in pino). */
const errorsLogged = (lines: Array<Record<string, unknown>>) =>
  lines.filter((l) => l.event === 'plan_failed' && l.level === 50);

describe('a calculator that keeps failing', () => {
  it('is logged as an error once, its repeats quietly, and its recovery once', async () => {
    const computer = new SpoilingComputer();
    const { s, logs } = await boot(computer);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 })).status).toBe(200);
    const planned = computer.computations;
    computer.failWith = 'plan worker exited with code 134';
    // A burst of submissions moving the rates from the plan's, each asking for a plan, then two hours
    // of ticks (eight timer runs).
    for (let i = 0; i < 10; i++) {
      expect((await s.request('POST', '/v1/jobs', { class: 'bert' })).status).toBe(201);
      await s.service.planner.idle();
    }
    await s.ticks(120);
    const failed = () => computer.computations - planned;
    // More than the timer runs: submissions asked too.
    expect(failed()).toBeGreaterThan(9);
    expect(errorsLogged(logs.lines)).toHaveLength(1);
    expect(logs.lines.filter((l) => l.event === 'plan_failed')).toHaveLength(failed());
    expect((await s.request('GET', '/v1/status')).body.plannerError).toBe('plan worker exited with code 134');
    // Each counted, for an alert on increase(): the log tells once, the counter every time.
    const metrics = (await s.request('GET', '/metrics')).body as string;
    expect(metrics).toMatch(/^# TYPE boa_plan_failures_total counter$/m);
    expect(metrics).toMatch(new RegExp(`^boa_plan_failures_total ${failed()}$`, 'm'));

    // A different failure is news: logged as an error again.
    computer.failWith = 'plan computation took over 300 s: worker ended';
    await s.ticks(16);
    expect(errorsLogged(logs.lines).map((l) => l.error)).toEqual([
      'plan worker exited with code 134',
      'plan computation took over 300 s: worker ended',
    ]);

    computer.failWith = undefined;
    await s.ticks(16);
    const recovered = logs.lines.filter((l) => l.event === 'plan_recovered');
    expect(recovered).toHaveLength(1);
    expect(recovered[0]!.failures).toBe(failed() - 1);
    expect((await s.request('GET', '/v1/status')).body.plannerError).toBeNull();

    // A failure after the recovery is news again.
    computer.failWith = 'plan worker exited with code 134';
    await s.ticks(16);
    expect(errorsLogged(logs.lines)).toHaveLength(3);
  }, 120_000);
});

describe('a stop during a computation', () => {
  it('logs no failure: the computation is dropped, and the next start plans again', async () => {
    const computer = new GatedComputer();
    const { s, logs } = await boot(computer);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 20 })).status).toBe(200);
    computer.open = false;
    void s.service.planner.request('timer');
    expect(computer.held).toHaveLength(1);
    services.splice(services.indexOf(s), 1);
    await s.close();
    expect(logs.lines.filter((l) => l.event === 'plan_failed')).toEqual([]);
    expect(logs.lines.filter((l) => l.event === 'plan_abandoned')).toHaveLength(1);
  }, 60_000);
});
