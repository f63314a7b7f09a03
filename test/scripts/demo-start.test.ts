/**
 * The demo's service starts just before the first arrival, so that its arrival rates count that job
 * (workload-8 with cifar10, bert and deepspeech2: its first job is the only bert for 4 hours).
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { demoStartSeconds } from '../../scripts/lib/demo-start.ts';
import { bootService } from '../../src/service/boot.ts';
import { InlinePlanComputer } from '../../src/service/calculator/computer.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { estimatedRates } from '../../src/service/plan-inputs.ts';

const EPOCH = Date.UTC(2026, 0, 1);

/** bert's estimated rate a minute after its one job, on a service started at `startSeconds`. */
async function bertRate(startSeconds: number, arrival: number): Promise<number> {
  let now = EPOCH + startSeconds * 1000;
  const boa = await bootService(
    resolveConfig({ dataDir: ':memory:', token: 'demo-start-token-0123456789', logLevel: 'silent' }),
    { clock: { now: () => now }, computer: new InlinePlanComputer(), logger: pino({ level: 'silent' }) },
  );
  try {
    boa.service.setBudget(40);
    now = EPOCH + arrival * 1000;
    boa.service.registerJob('bert', 'bert-0');
    now += 60_000;
    return estimatedRates(boa.service, now).bert ?? 0;
  } finally {
    await boa.close();
  }
}

describe('the demo service start', () => {
  it('counts the first arrival in the rates (started at it, the service never did)', async () => {
    const trace = [{ time: 259 }, { time: 14_500 }];
    expect(await bertRate(demoStartSeconds(trace), 259)).toBeGreaterThan(0.1);
    expect(await bertRate(259, 259)).toBe(0);
  });
});
