import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** A logger that keeps its JSON lines. */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

/** A service of these instances with budget 40 and a job's nodes paid for a few ticks. */
async function spending(config: Record<string, unknown>) {
  const { logger, lines } = recordingLogger();
  const s = await startService({
    config: {
      ...config,
      budget: 40,
      priorRates: { cifar10: 8 },
      local: { maxNodes: 64, bootSeconds: 0, releaseSeconds: 0 },
    },
    logger,
  });
  cleanups.push(s.close);
  await s.request('POST', '/v1/jobs', { class: 'cifar10' });
  await s.ticks(5);
  const budget = (await s.request('GET', '/v1/budget')).body;
  return { budget, warnings: lines.filter((l) => l.event === 'node_price_unknown') };
}

describe('the $ figures at the price of the instance type deployed', () => {
  it.each([
    ['g4dn.xlarge', 0.526, 1],
    ['g4dn.metal', 7.824, 8],
  ])('%s: $%d a node-hour, %d GPUs a node', async (instanceType, price, gpus) => {
    const { budget, warnings } = await spending({ instanceType });
    expect(budget).toMatchObject({ instanceType, nodePricePerHour: price });
    expect(budget.dollarsPerMonth).toBeCloseTo(40 * (price / gpus) * 730, 2);
    expect(budget.window.paidGpuHoursPerHour).toBeGreaterThan(0);
    expect(budget.paidDollarsPerMonth).toBeCloseTo(
      budget.window.paidGpuHoursPerHour * (price / gpus) * 730,
      0,
    );
    expect(warnings).toEqual([]);
  });

  it('an explicit price wins over the instance type', async () => {
    const { budget } = await spending({ instanceType: 'g4dn.xlarge', nodePricePerHour: 0.3 });
    expect(budget.nodePricePerHour).toBe(0.3);
    expect(budget.dollarsPerMonth).toBeCloseTo(40 * 0.3 * 730, 2);
  });

  it('a type without a known price: no $ figures, and a warning at start naming the variable', async () => {
    const { budget, warnings } = await spending({ instanceType: 'p4d.24xlarge', gpusPerNode: 8 });
    expect(budget.window.paidGpuHoursPerHour).toBeGreaterThan(0);
    expect(budget).toMatchObject({
      instanceType: 'p4d.24xlarge',
      nodePricePerHour: null,
      dollarsPerMonth: null,
      paidDollarsPerMonth: null,
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, instanceType: 'p4d.24xlarge' });
    expect(warnings[0]!.msg).toMatch(/instance type p4d\.24xlarge.*BOA_NODE_PRICE_PER_HOUR/);
  });
});
