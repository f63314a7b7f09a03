/**
 * A budget cut reversed within seconds (found by an operator's trial): the cut's tick terminates the
 * nodes above the new ceiling, and they stay paid while they leave (30 s on the embedded pool; on EKS
 * while the group's lifecycle hook drains them). The next tick, at the old budget again, must not
 * launch their replacements beside them: the trial read 84 GPUs paid against a ceiling of 44.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { bootService } from '../../src/service/boot.ts';
import { InlinePlanComputer } from '../../src/service/calculator/computer.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { paidGpusNow } from '../../src/service/paid-now.ts';

const RELEASE_SECONDS = 30;

describe('a budget cut reversed a second later', () => {
  it('pays no more GPUs than the ceiling while the cut nodes leave, then launches again', async () => {
    let t = Date.UTC(2026, 0, 1);
    const config = resolveConfig({
      dataDir: ':memory:',
      token: 'cut-reversed-token-0123456789',
      tickSeconds: 1,
      local: { maxNodes: 64, bootSeconds: 5, releaseSeconds: RELEASE_SECONDS },
      logLevel: 'silent',
    });
    const boa = await bootService(config, {
      clock: { now: () => t },
      computer: new InlinePlanComputer(),
      logger: pino({ level: 'silent' }),
    });
    const { service, scheduler } = boa;
    const tick = async () => {
      await scheduler.tick();
      await service.planner.idle();
      await scheduler.settle();
      t += 1000;
      const paid = paidGpusNow(await service.deps.pool.listNodes());
      return { paid, ceiling: service.spendCeiling(t - 1000)?.gpus ?? Number.POSITIVE_INFINITY };
    };
    try {
      service.setBudget(40);
      for (let i = 0; i < 40; i++) service.registerJob(['cifar10', 'bert', 'deepspeech2'][i % 3]!, `j-${i}`);
      for (let i = 0; i < 30; i++) await tick();
      const before = paidGpusNow(await service.deps.pool.listNodes());
      expect(before).toBeGreaterThanOrEqual(36);

      service.setBudget(4);
      const cut = await tick();
      expect(cut.paid, 'the cut releases nodes at once (they stay listed, paid, while they leave)').toBe(
        before,
      );
      service.setBudget(40);
      let most = 0;
      let afterRelease = 0;
      for (let i = 0; i < RELEASE_SECONDS + 20; i++) {
        const { paid, ceiling } = await tick();
        most = Math.max(most, paid);
        // The ceiling keeps a node it holds within half a node of it (against flapping): 2 GPUs.
        expect(paid, `tick ${i} after the reversal`).toBeLessThanOrEqual(Math.max(ceiling + 2, before));
        if (i > RELEASE_SECONDS + 10) afterRelease = paid;
      }
      expect(most).toBeLessThanOrEqual(before);
      // Once the cut nodes are gone, boa launches for the jobs again.
      expect(afterRelease).toBeGreaterThanOrEqual(36);
    } finally {
      await boa.close();
    }
  }, 60_000);
});
