/**
 * A fixed cluster is built node by node before the first tick: `simulate --policy lyra --budget 1e9`
 * ran out of memory with a V8 stack trace. Its size is refused above MAX_CLUSTER_GPUS, naming the limit.
 */
import { describe, expect, it } from 'vitest';
import { EngineConfigError } from '../../../src/sim/engine/config.ts';
import { fixedNodes } from '../../../src/sim/engine/setup.ts';
import { ClusterSpecError, MAX_CLUSTER_GPUS, parseClusterSpec } from '../../../src/sim/gpu-types.ts';

describe('the size of a fixed cluster', () => {
  it('is its budget in whole nodes up to the limit', () => {
    expect(fixedNodes('lyra', { budget: 10 }, 4)).toBe(3);
    expect(fixedNodes('lyra', { budget: MAX_CLUSTER_GPUS }, 4)).toBe(MAX_CLUSTER_GPUS / 4);
  });

  it('is refused above the limit, naming it and the budget', () => {
    expect(() => fixedNodes('lyra', { budget: 1e9 }, 4)).toThrow(EngineConfigError);
    expect(() => fixedNodes('lyra', { budget: 1e9 }, 4)).toThrow(
      `policy "lyra" runs on a fixed cluster of its budget in GPUs: at most ${MAX_CLUSTER_GPUS}, got 1000000000`,
    );
  });

  it('given as node pools, is refused above the limit in all its pools together', () => {
    const half = MAX_CLUSTER_GPUS / 8; // nodes of 4 GPUs: half the limit per pool
    expect(parseClusterSpec(`g4dn:${half},p3:${half}`)).toHaveLength(2);
    expect(() => parseClusterSpec(`g4dn:${half},p3:${half + 1}`)).toThrow(ClusterSpecError);
    expect(() => parseClusterSpec('g4dn:1000000000')).toThrow(
      `the cluster has 4000000000 GPUs; at most ${MAX_CLUSTER_GPUS} are allowed`,
    );
  });
});
