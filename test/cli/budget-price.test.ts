import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function started(config: Record<string, unknown>) {
  const s = await startCliService({ config });
  cleanups.push(s.close);
  return s;
}

describe('boa budget, priced by the instance type', () => {
  it('g4dn.xlarge: $0.526 a node-hour, one GPU a node', async () => {
    const s = await started({ instanceType: 'g4dn.xlarge' });
    const set = await s.boa(['budget', 'set', '40']);
    expect(set.status).toBe(0);
    // 40 GPUs of one per node at $0.526, 730 hours a month.
    expect(set.stdout).toMatch(/^budget set\s+40 GPU-hours\/hour \(\$15,359\.20\/month\)$/m);
    const get = await s.boa(['budget', 'get']);
    expect(get.stdout).toMatch(/^price\s+\$0\.526 per g4dn\.xlarge node-hour$/m);
    expect(get.stdout).toMatch(/^paid \$\/month\s+\$/m);
  });

  it('a type without a known price: no $ figure, and the price row says what to set', async () => {
    const s = await started({ instanceType: 'p4d.24xlarge', gpusPerNode: 8 });
    const set = await s.boa(['budget', 'set', '40']);
    expect(set.status).toBe(0);
    expect(set.stdout).toMatch(/^budget set\s+40 GPU-hours\/hour$/m);
    const get = await s.boa(['budget', 'get']);
    expect(get.status).toBe(0);
    expect(get.stdout).toMatch(/^budget\s+40 GPU-hours\/hour$/m);
    expect(get.stdout).toMatch(
      /^price\s+unknown for p4d\.24xlarge: set BOA_NODE_PRICE_PER_HOUR \(or nodePricePerHour\) on the service$/m,
    );
    expect(get.stdout).not.toMatch(/\$/);
  });
});
