import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CapacityBackoff } from '../../../src/service/nodes/capacity.ts';
import { chooseVictims } from '../../../src/service/nodes/victims.ts';
import type { NodeGroupState, PoolNode } from '../../../src/service/ports.ts';

const node = (id: string, launchedAt: number, ready = true, name?: string): PoolNode => ({
  id,
  launchedAt,
  gpus: 4,
  ready,
  ...(name ? { name } : {}),
});

/** GPUs in use per node name, from allocations (one entry per GPU). */
const busyGpus = (allocations: string[][]) => (name: string) =>
  allocations.flat().filter((n) => n === name).length;

describe('chooseVictims', () => {
  it('takes idle nodes not ready first, then the emptiest, then the newest', () => {
    const nodes = [node('a', 1), node('b', 2), node('c', 3), node('d', 4, false)];
    const busy = busyGpus([['a', 'a'], ['b'], ['c', 'c', 'c']]);
    expect(chooseVictims(nodes, 1, busy).map((n) => n.id)).toEqual(['d']);
    expect(chooseVictims(nodes, 2, busy).map((n) => n.id)).toEqual(['d', 'b']);
    expect(chooseVictims(nodes, 3, busy).map((n) => n.id)).toEqual(['d', 'b', 'a']);
    expect(chooseVictims(nodes, 0, busy)).toEqual([]);
  });

  it('ranks a node not ready that holds jobs (its NotReady grace) by its load, after idle ready nodes', () => {
    const nodes = [node('held', 1, false), node('idle', 2), node('busy', 3), node('booting', 4, false)];
    const busy = busyGpus([['held', 'held'], [], ['busy', 'busy', 'busy']]);
    expect(chooseVictims(nodes, 4, busy).map((n) => n.id)).toEqual(['booting', 'idle', 'held', 'busy']);
  });

  it('picks a few one by one in the same order as a full sort', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            load: fc.integer({ min: 0, max: 4 }),
            at: fc.integer({ min: 0, max: 5 }),
            ready: fc.boolean(),
          }),
          {
            minLength: 9,
            maxLength: 40,
          },
        ),
        fc.integer({ min: 1, max: 8 }),
        (specs, count) => {
          const nodes = specs.map((s, i) => node(`n${i}`, s.at, s.ready));
          const load = (name: string) => specs[Number(name.slice(1))]?.load ?? 0;
          const sorted = chooseVictims(nodes, nodes.length, load).map((n) => n.id);
          expect(chooseVictims(nodes, count, load).map((n) => n.id)).toEqual(sorted.slice(0, count));
        },
      ),
    );
  });

  it('matches allocations by Kubernetes node name; among idle nodes the newest goes', () => {
    const nodes = [node('i-1', 1, true, 'n1'), node('i-2', 2, true, 'n2'), node('i-3', 3, true, 'n3')];
    const busy = busyGpus([['n3', 'n3']]);
    expect(chooseVictims(nodes, 1, busy).map((n) => n.id)).toEqual(['i-2']);
  });
});

describe('CapacityBackoff', () => {
  const group = (desiredSize: number, failures: number[] = []): NodeGroupState => ({
    minSize: 0,
    maxSize: 10,
    desiredSize,
    launchFailures: failures.map((at) => ({ at, message: `InsufficientInstanceCapacity at ${at}` })),
  });

  it('doubles the wait per new failure up to the cap, and clears once the wanted count is reached', () => {
    const b = new CapacityBackoff({ baseMs: 60_000, maxMs: 200_000 });
    expect(b.observe(group(2, [1_000]), 1, 2, 2_000)).toBe(true);
    expect(b.view(2_000)).toMatchObject({ backoffUntil: 62_000, failures: 1 });
    expect(b.active(61_999)).toBe(true);
    // The same failure seen again changes nothing; a lowered desired size reached does not clear it.
    expect(b.observe(group(1, [1_000]), 1, 2, 70_000)).toBe(false);
    expect(b.view(70_000).failures).toBe(1);
    expect(b.observe(group(2, [1_000, 80_000]), 1, 2, 90_000)).toBe(true);
    expect(b.view(90_000)).toMatchObject({ backoffUntil: 210_000, failures: 2 });
    b.observe(group(2, [1_000, 80_000, 300_000]), 1, 2, 310_000);
    expect(b.view(310_000)).toMatchObject({ backoffUntil: 510_000, failures: 3 }); // capped at 200 s
    b.observe(group(2, [1_000, 80_000, 300_000]), 2, 2, 600_000);
    expect(b.view(600_000)).toEqual({ backoffUntil: null, failures: 0, reason: null });
  });
});
