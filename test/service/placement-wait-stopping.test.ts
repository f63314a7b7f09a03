/**
 * A job that would run short beside GPUs stopping replicas hold waits for them when they give it its
 * whole width: placed short, it would be widened (a restart) as soon as they end, a grace at most later.
 */
import { describe, expect, it } from 'vitest';
import { OrderedStops } from '../../src/service/ordered-stops.ts';
import { IncrementalPlacement } from '../../src/service/placement.ts';
import { STOP_OVERDUE_MS, StoppingGpus } from '../../src/service/stopping-gpus.ts';
import { BOUNDS, type Job, node, widthOf } from './placement-fixture.ts';

/** Node i-0 with job 1 on 1 GPU, and 2 more held by stopping replicas: 1 GPU free. */
function besideStopping(held: number, overdue = 0) {
  const placement = new IncrementalPlacement();
  const z: Job = { id: 1, width: 1, allocation: [] };
  z.allocation = placement.place([z], widthOf, [node(0)], BOUNDS).changed.get(1) as string[];
  placement.holdStopping(new Map([['i-0', held]]), () => true, new Map([['i-0', overdue]]));
  return { placement, z };
}

describe('a job that would run short beside stopping replicas', () => {
  it('waits for them when they and the free GPUs make its width, then starts once at its width', () => {
    const { placement, z } = besideStopping(2);
    const y: Job = { id: 2, width: 3, allocation: [] };
    const result = placement.place([z, y], widthOf, [node(0)], BOUNDS);
    expect(result.changed.has(2)).toBe(false);
    expect([...placement.heldByStopping]).toEqual([[2, ['i-0']]]);
    // The free GPU it leaves is held for it: the idle fill lends it to no one meanwhile.
    expect(placement.freeGpus().size).toBe(0);
    // The stops ended: the next pass places it whole.
    placement.holdStopping(new Map(), () => true);
    const next = placement.place([z, y], widthOf, [node(0)], BOUNDS);
    expect(next.changed.get(2)).toEqual(['i-0', 'i-0', 'i-0']);
    expect(placement.heldByStopping.size).toBe(0);
  });

  it('waits ahead of a job behind it, which waits too', () => {
    const { placement, z } = besideStopping(2);
    const y: Job = { id: 2, width: 3, allocation: [] };
    const w: Job = { id: 3, width: 2, allocation: [] };
    const result = placement.place([z, y, w], widthOf, [node(0)], BOUNDS);
    expect(result.changed.size).toBe(0);
    expect([...placement.heldByStopping.keys()]).toEqual([2, 3]);
    placement.holdStopping(new Map(), () => true);
    const next = placement.place([z, y, w], widthOf, [node(0)], BOUNDS);
    expect(next.changed.get(2)).toEqual(['i-0', 'i-0', 'i-0']);
    expect(next.changed.has(3)).toBe(false);
  });

  it('runs short as before when the stopping GPUs would not make its width either', () => {
    const { placement, z } = besideStopping(1);
    const y: Job = { id: 2, width: 4, allocation: [] };
    const result = placement.place([z, y], widthOf, [node(0)], BOUNDS);
    expect(result.changed.get(2)).toEqual(['i-0', 'i-0']);
    expect(placement.heldByStopping.size).toBe(0);
  });

  it('leaves a running job that cannot grow yet where it runs, not stopped to wait', () => {
    const { placement, z } = besideStopping(2);
    z.width = 3;
    const result = placement.place([z], widthOf, [node(0)], BOUNDS);
    expect(result.changed.has(1)).toBe(false);
    expect(placement.slotsOf(1)).toHaveLength(1);
    expect(placement.heldByStopping.size).toBe(0);
  });

  it('places a job that fits whole in the free GPUs at once', () => {
    const { placement, z } = besideStopping(2);
    const y: Job = { id: 2, width: 1, allocation: [] };
    const result = placement.place([z, y], widthOf, [node(0)], BOUNDS);
    expect(result.changed.get(2)).toEqual(['i-0']);
    expect(placement.heldByStopping.size).toBe(0);
  });

  it('runs short when a running job that cannot grow yet would take the stopping GPUs first', () => {
    const placement = new IncrementalPlacement();
    const x: Job = { id: 1, width: 2, allocation: [] };
    const z: Job = { id: 2, width: 3, allocation: [] };
    const first = placement.place([x, z], widthOf, [node(0), node(1)], BOUNDS);
    x.allocation = first.changed.get(1) as string[];
    z.allocation = first.changed.get(2) as string[];
    expect(new Set(x.allocation).size).toBe(1);
    const xNode = x.allocation[0] as string;
    const zNode = z.allocation[0] as string;
    expect(zNode).not.toBe(xNode);
    // 2 GPUs stop beside x, which grows to 4 (it can next pass, where they are): y gets only what is left.
    placement.holdStopping(new Map([[xNode, 2]]), () => true);
    x.width = 4;
    const y: Job = { id: 3, width: 2, allocation: [] };
    const result = placement.place([x, z, y], widthOf, [node(0), node(1)], BOUNDS);
    expect(result.changed.has(1)).toBe(false);
    expect(result.changed.get(3)).toEqual([zNode]);
    expect(placement.heldByStopping.size).toBe(0);
  });

  it('runs short rather than wait for replicas still there past their SIGKILL time (a pod stuck stopping)', () => {
    const { placement, z } = besideStopping(2, 1);
    const y: Job = { id: 2, width: 3, allocation: [] };
    const result = placement.place([z, y], widthOf, [node(0)], BOUNDS);
    expect(result.changed.get(2)).toEqual(['i-0']);
  });
});

describe('stops overdue', () => {
  it('are the GPUs of stopping replicas still reported past their SIGKILL time and its slack', () => {
    const now = 1_000_000;
    const replica = (rank: number, node: string, killAt?: number) => ({
      jobId: 7,
      generation: 1,
      rank,
      node,
      phase: 'stopping' as const,
      gpus: 2,
      ...(killAt === undefined ? {} : { killAt }),
    });
    const live = [
      replica(0, 'i-0', now - STOP_OVERDUE_MS - 1),
      replica(1, 'i-1', now - STOP_OVERDUE_MS + 1),
      replica(2, 'i-2'),
    ];
    const stopping = new StoppingGpus();
    const held = stopping.perNode(live, new OrderedStops(), new Map(), 4, now);
    expect([...held]).toEqual([
      ['i-0', 2],
      ['i-1', 2],
      ['i-2', 2],
    ]);
    expect([...stopping.overdue]).toEqual([['i-0', 2]]);
  });
});
