/**
 * Settings that become timer delays are bounded: Node runs a timer over 2^31-1 ms (about 24.8 days)
 * after 1 ms, so `{"tickSeconds": 1e9}` ran the tick about every millisecond (found in a newcomer trial).
 */
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/service/config.ts';
import { fromSource } from '../../src/service/config-sources.ts';

const TIMER_LIMIT_MS = 2 ** 31 - 1;
const file = (settings: Record<string, unknown>) => fromSource({ kind: 'file', path: 'boa.json' }, settings);

describe('settings that become timer delays', () => {
  it.each([
    [
      file({ tickSeconds: 1e9 }),
      'tickSeconds in boa.json must be above 0 and at most 3600 seconds (an hour): ' +
        "a finished job's nodes are paid until the next tick (got 1000000000)",
    ],
    [
      fromSource({ kind: 'flags' }, { tickSeconds: 5e6 }),
      '--tick-seconds must be above 0 and at most 3600 seconds (an hour)',
    ],
    [
      file({ calculatorMinutes: 1e8 }),
      'calculatorMinutes in boa.json must be above 0 and at most 1440 minutes (a day)',
    ],
    [
      file({ replicaCheckSeconds: 1e7 }),
      'replicaCheckSeconds in boa.json must be above 0 and at most 3600 seconds',
    ],
    [
      fromSource({ kind: 'env' }, { terminationGraceSeconds: 3e6 }),
      'BOA_TERMINATION_GRACE_SECONDS must be at most 3600 seconds (an hour)',
    ],
    [
      file({ terminationGraceSeconds: -1 }),
      'terminationGraceSeconds in boa.json must be from 0 to 3600 seconds (an hour)',
    ],
    [
      file({ tokenRefreshSeconds: 1e7 }),
      'tokenRefreshSeconds in boa.json must be above 0 and at most 86400 seconds (a day)',
    ],
  ])('refuses %o, naming the setting, the value and the range', (layer, message) => {
    expect(() => resolveConfig(layer)).toThrow(message);
  });

  it('accepts each at its bound, every timer far below the timer limit', () => {
    const config = resolveConfig({
      tickSeconds: 3600,
      calculatorMinutes: 1440,
      replicaCheckSeconds: 3600,
      terminationGraceSeconds: 3600,
      tokenRefreshSeconds: 86_400,
    });
    for (const ms of [
      config.tickSeconds * 1000,
      config.replicaCheckSeconds * 1000,
      (config.terminationGraceSeconds + 60) * 1000,
      config.tokenRefreshSeconds * 1000,
    ])
      expect(ms).toBeLessThan(TIMER_LIMIT_MS / 10);
  });

  it('keeps the tighter rule on AWS', () => {
    expect(() =>
      resolveConfig({ cloud: 'aws', aws: { clusterName: 'c', nodegroupName: 'g' }, tickSeconds: 600 }),
    ).toThrow(/tickSeconds must be at most 120 with cloud "aws", got 600/);
  });
});
