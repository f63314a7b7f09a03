/**
 * GPUs a job holds beyond its wanted width give way only where that places more of the wanted widths
 * (src/sim/policies/boa/place.ts, as the service's idle-fill-pass.ts).
 */
import { describe, expect, it } from 'vitest';
import { placeWanted } from '../../../../src/sim/policies/boa/place.ts';
import { clusterView, jobView, nodes } from '../fakes.ts';

const slots = (node: number, count: number) => Array.from({ length: count }, () => node);

function place(wanted: Array<{ id: number; width: number; current: number[] }>, bonus: Map<number, number>) {
  return placeWanted({
    wanted,
    ordered: wanted.map((w) => jobView(w.id, { allocation: w.current })),
    cluster: clusterView(nodes(3)),
    maxNodes: 3,
    fill: null,
    classes: new Map(),
    bonus,
  });
}

describe("boa's kept GPUs in the simulator", () => {
  it('stay where the short job could not use them (a growing job gets its whole width or none)', () => {
    const out = place(
      [
        { id: 1, width: 1, current: slots(0, 4) },
        { id: 2, width: 12, current: slots(1, 4) },
        { id: 3, width: 2, current: slots(2, 2) },
      ],
      new Map([[1, 4]]),
    );
    // Before, job 1 went back to 1 GPU (a restart) and job 2 still ran on its 4.
    expect(out.allocations.get(1)).toEqual(slots(0, 4));
    expect(out.allocations.get(2)).toEqual(slots(1, 4));
    expect(out.held.get(1)).toBe(1);
  });

  it('give way where a job would otherwise wait', () => {
    const out = place(
      [
        { id: 1, width: 1, current: slots(0, 4) },
        { id: 2, width: 4, current: slots(1, 4) },
        { id: 3, width: 4, current: slots(2, 4) },
        { id: 4, width: 3, current: [] },
      ],
      new Map([[1, 4]]),
    );
    expect(out.allocations.get(1)).toEqual([0]);
    expect(out.allocations.get(4)).toEqual(slots(0, 3));
  });
});
