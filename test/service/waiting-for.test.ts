/** When nodes are on their way for a waiting job, and when none are (then it waits for GPUs). */
import { describe, expect, it } from 'vitest';
import type { NodeGroupState, PoolNode } from '../../src/service/ports.ts';
import { waitContext } from '../../src/service/waiting-for.ts';
import { poolNode as node } from './pool-node.ts';

const group = (desiredSize: number, extra: Partial<NodeGroupState> = {}): NodeGroupState => ({
  minSize: 0,
  maxSize: 4,
  desiredSize,
  ...extra,
});
const coming = (nodes: PoolNode[], g: NodeGroupState | undefined) =>
  waitContext({ lastTickAt: 0, nodes, group: g }).nodesComing;

describe('waitContext', () => {
  it('has no node coming when every node is ready and the group has what it asked for', () => {
    expect(coming([node('a'), node('b')], group(2))).toBe(false);
    expect(coming([], undefined)).toBe(false);
    // A node cordoned by hand stays so: nothing is on its way.
    expect(
      coming([node('a'), node('b', { ready: false, cordoned: true, waitingFor: 'cordoned' })], group(2)),
    ).toBe(false);
  });

  it('has nodes coming while one boots, one asked for is unlisted, one leaves, or an update runs', () => {
    expect(coming([node('a'), node('b', { ready: false, waitingFor: 'booting' })], group(2))).toBe(true);
    expect(coming([node('a')], group(2))).toBe(true);
    // A node leaving: a raise waits until it is gone (paid-cap.ts), then nodes come.
    expect(
      coming([node('a'), node('b', { leaving: true, ready: false, waitingFor: 'leaving' })], group(1)),
    ).toBe(true);
    expect(coming([node('a'), node('b')], group(2, { updateInFlight: 'u-1' }))).toBe(true);
  });
});
