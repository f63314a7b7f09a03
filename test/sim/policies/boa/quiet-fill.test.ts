/**
 * boa's idle fill switches to its quiet rule (QUIET_FILL: by time saved, jobs on several nodes too)
 * once no job has arrived for the drain's hours, as the service's `quietFillSavedRestarts` does; the
 * rule itself is tested in test/core/exec/idle-fill.test.ts. Here: which rule each tick passes.
 */
import { describe, expect, it, vi } from 'vitest';
import { DEFAULT_FILL, type FillOptions, QUIET_FILL } from '../../../../src/core/exec/idle-fill.ts';
import type { PolicyOptions } from '../../../../src/sim/policy.ts';
import { boaContext } from './context.ts';
import { clusterView, jobView, nodes } from '../fakes.ts';

const passed: Array<FillOptions | null> = [];
vi.mock('../../../../src/sim/policies/boa/place.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../../src/sim/policies/boa/place.ts')>();
  return {
    placeWanted: (input: Parameters<typeof real.placeWanted>[0]) => {
      passed.push(input.fill);
      return real.placeWanted(input);
    },
  };
});
const { boaPolicy } = await import('../../../../src/sim/policies/boa/index.ts');

const context = boaContext({ cifar10: 8 });
const job = jobView(1, { name: 'cifar10-1', app: 'cifar10' });
const cluster = (now: number) => clusterView(nodes(4), { now, mode: 'autoscaled', maxNodes: 100 });

/** The fill rule of a tick 1 h and of one 2.5 h after the only arrival. */
function rules(options: PolicyOptions = {}): Array<FillOptions | null> {
  const policy = boaPolicy.create(context, { budget: 40, ...options });
  policy.onArrival?.(job, 0);
  passed.length = 0;
  policy.decide(cluster(3600), [job]);
  policy.decide(cluster(9000), [job]);
  return [...passed];
}

describe("boa's quiet fill", () => {
  it('is the 1.1x rule while jobs arrive, by time saved once none has for 2 hours (the drain)', () => {
    expect(rules()).toEqual([DEFAULT_FILL, QUIET_FILL]);
    expect(QUIET_FILL.minSavedRestarts).toBe(20);
  });

  it('follows the drain: later with boa@drain3, never with boa@drain0; boa@fillq0 turns it off', () => {
    expect(rules({ drainAfterHours: 3 })).toEqual([DEFAULT_FILL, DEFAULT_FILL]);
    expect(rules({ drainAfterHours: 0 })).toEqual([DEFAULT_FILL, DEFAULT_FILL]);
    expect(rules({ quietFillSavedRestarts: 0 })).toEqual([DEFAULT_FILL, DEFAULT_FILL]);
    expect(rules({ quietFillSavedRestarts: 40 })[1]).toEqual({ ...DEFAULT_FILL, minSavedRestarts: 40 });
    // boa@fillK: the time-saved rule from the start.
    const always = { ...DEFAULT_FILL, minSavedRestarts: 10 };
    expect(rules({ fillSavedRestarts: 10 })).toEqual([always, always]);
  });

  it('refuses a negative quietFillSavedRestarts, naming what is allowed', () => {
    expect(() => boaPolicy.create(context, { budget: 40, quietFillSavedRestarts: -1 })).toThrow(
      /quietFillSavedRestarts must be a number >= 0/,
    );
  });
});
