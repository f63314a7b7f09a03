/**
 * A burst while the pool's listing fails (an API server blip on EKS, throttling): boa still resizes the
 * group from the last listing, and the nodes it launches meanwhile are paid though no listing shows
 * them. The ledger charges them from launch once the listing is back; until then the spend ceiling read
 * them as unpaid and kept lending the window's room: 224 GPUs ran against a budget of 40 and a window
 * paid 6.82 GPU-hours against the 4.04 allowed (3.95 with the fix). Now the ceiling counts the group's
 * desired size beyond the listing the ledger last stored as paid while listings fail
 * (service/unlisted-paid.ts); a listing between ticks (after a raise) is not one the ledger stored, and
 * counted as one, an outage just after a raise paid 7.48 against 4.04; and the group's size is what boa
 * asked for since that listing when more than the group last said (the group cannot be described in
 * the outage either: 6.82). On a window scaled down to 6
 * minutes (1 s ticks, a 36 s horizon), as test/service/budget-window.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { paidGpusNow } from '../../src/service/paid-now.ts';
import { FLAP_GUARD, GPUS_PER_NODE, scaledWindowService, WINDOW_CAP } from './scaled-window.ts';

const TICKS = 800;

/**
 * Runs 800 ticks with the listing failing over [failFrom, failTo) and `bursts` jobs registered at each
 * tick given; the heaviest window the ledger paid, and the most GPUs paid that the ledger held no row for.
 */
async function run(
  failFrom: number,
  failTo: number,
  bursts: ReadonlyMap<number, number>,
  describeFails = false,
) {
  const window = await scaledWindowService('listing-outage-token-0123456789', 3);
  const { service } = window;
  const pool = service.deps.pool;
  const listNodes = pool.listNodes.bind(pool);
  const describe = pool.describe.bind(pool);
  try {
    let heaviest = 0;
    let mostUnlisted = 0;
    for (let tick = 0; tick < TICKS; tick++) {
      window.register(bursts.get(tick) ?? 0, 'o');
      if (tick === failFrom) {
        pool.listNodes = async () => {
          throw new Error('the server was unable to return a response in the time allotted');
        };
        if (describeFails)
          pool.describe = async () => {
            throw new Error('Throttling: Rate exceeded');
          };
      }
      if (tick === failTo) {
        pool.listNodes = listNodes;
        pool.describe = describe;
      }
      await window.tick();
      if (tick >= failFrom && tick < failTo) {
        const unlisted = paidGpusNow(await listNodes()) - service.deps.repo.ledger.openNodeGpus();
        mostUnlisted = Math.max(mostUnlisted, unlisted);
      }
      heaviest = Math.max(heaviest, window.windowPaid());
    }
    return { heaviest, mostUnlisted };
  } finally {
    pool.listNodes = listNodes;
    pool.describe = describe;
    await window.boa.close();
  }
}

describe('a burst while the node listing fails', () => {
  it('pays at most budget x (window + slack x horizon) in any window, the unlisted nodes counted', async () => {
    const { heaviest, mostUnlisted } = await run(
      200,
      400,
      new Map([
        [5, 50],
        [210, 200],
      ]),
    );
    // The case at hand: the group grew beyond the last listing during the outage.
    expect(mostUnlisted).toBeGreaterThanOrEqual(8 * GPUS_PER_NODE);
    expect(heaviest).toBeLessThanOrEqual(WINDOW_CAP + FLAP_GUARD);
  }, 120_000);

  it('counts the nodes a listing between ticks showed after a raise, which the ledger never stored', async () => {
    const { heaviest, mostUnlisted } = await run(201, 400, new Map([[200, 200]]));
    expect(mostUnlisted).toBeGreaterThanOrEqual(8 * GPUS_PER_NODE);
    expect(heaviest).toBeLessThanOrEqual(WINDOW_CAP + FLAP_GUARD);
  }, 120_000);

  it("counts the sizes boa asked for while the group's size cannot be read either", async () => {
    const bursts = new Map([
      [5, 50],
      [210, 200],
    ]);
    const { heaviest, mostUnlisted } = await run(200, 400, bursts, true);
    expect(mostUnlisted).toBeGreaterThanOrEqual(8 * GPUS_PER_NODE);
    expect(heaviest).toBeLessThanOrEqual(WINDOW_CAP + FLAP_GUARD);
  }, 120_000);
});
