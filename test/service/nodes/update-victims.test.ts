import { describe, expect, it } from 'vitest';
import { chooseUpdateVictims, paidBeyondCeiling } from '../../../src/service/nodes/eks-update.ts';
import type { NodeGroupState, PoolNode } from '../../../src/service/ports.ts';

const node = (id: string, launchedAt: number, extra: Partial<PoolNode> = {}): PoolNode => ({
  id,
  launchedAt,
  gpus: 4,
  ready: true,
  ...extra,
});
const group: NodeGroupState = { minSize: 1, maxSize: 5, desiredSize: 4, status: 'UPDATING' };

describe('chooseUpdateVictims (during an EKS update)', () => {
  it('removes the nodes the update replaces first, busy ones too, and its new nodes last', () => {
    const nodes = [
      node('surge-idle', 30),
      node('old-busy', 10, { outdated: true }),
      node('old-idle', 20, { outdated: true }),
      node('new-busy', 25),
    ];
    const busy = (name: string) => (name.endsWith('busy') ? 4 : 0);
    const order = (count: number) => chooseUpdateVictims(nodes, count, busy).map((n) => n.id);
    expect(order(1)).toEqual(['old-idle']);
    expect(order(2)).toEqual(['old-idle', 'old-busy']);
    expect(order(4)).toEqual(['old-idle', 'old-busy', 'surge-idle', 'new-busy']);
  });

  it('without versions to compare: the nodes EKS marked for the update first, then idle, then the oldest launched', () => {
    const nodes = [node('newest', 30), node('marked', 20, { keepOnly: true }), node('oldest', 10)];
    expect(chooseUpdateVictims(nodes, 3, () => 0).map((n) => n.id)).toEqual(['marked', 'oldest', 'newest']);
    const busyOldest = (name: string) => (name === 'oldest' ? 2 : 0);
    expect(chooseUpdateVictims(nodes, 2, busyOldest).map((n) => n.id)).toEqual(['marked', 'newest']);
  });
});

describe('chooseUpdateVictims without the launch template read', () => {
  it('takes the nodes EKS tainted for the update as the ones it replaces, busy ones before an idle surge node', () => {
    // A DescribeAutoScalingGroups that failed this tick lists no node outdated. EKS's scale-up phase
    // taints every old node (keepOnly): removing the idle surge node first left the update nowhere to
    // move the old node's pods.
    const nodes = [node('surge-idle', 30), node('old-busy', 10, { keepOnly: true })];
    const busy = (name: string) => (name === 'old-busy' ? 4 : 0);
    expect(chooseUpdateVictims(nodes, 1, busy).map((n) => n.id)).toEqual(['old-busy']);
  });
});

describe('paidBeyondCeiling', () => {
  it('counts the nodes paid past the ceiling (pending ones too), not those on their way out, never below the minimum', () => {
    const nodes = [
      node('a', 1),
      node('b', 2, { billed: false }),
      node('leaving', 3, { leaving: true }),
      node('terminated', 4),
      node('c', 5),
    ];
    const removing = { terminated: (id: string) => id === 'terminated' };
    expect(paidBeyondCeiling(nodes, removing, 1, group)).toBe(2);
    expect(paidBeyondCeiling(nodes, removing, 0, group)).toBe(2);
    expect(paidBeyondCeiling(nodes, removing, 3, group)).toBe(0);
    expect(paidBeyondCeiling(nodes, removing, undefined, group)).toBe(0);
  });

  it("counts a replaced group's node of another type at its GPUs' share of one of the group's", () => {
    // Two 4-GPU nodes of the replaced group beside two 1-GPU nodes of the group, a cap of 6 1-GPU nodes:
    // 10 GPUs paid, 4 past it (counted as 2 nodes each way, the old nodes showed none past it).
    const nodes = [
      node('old-1', 1, { leaving: true, replacedGroup: 'gpu' }),
      node('old-2', 2, { leaving: true, replacedGroup: 'gpu' }),
      node('new-1', 3, { gpus: 1 }),
      node('new-2', 4, { gpus: 1 }),
    ];
    const none = { terminated: () => false };
    expect(paidBeyondCeiling(nodes, none, 6, { ...group, minSize: 0 }, 1)).toBe(4);
    // Two 1-GPU old nodes beside 4-GPU ones: half a node past a cap of 2 (chooseUpdateVictims takes one).
    const small = [
      node('old-1', 1, { gpus: 1, leaving: true, replacedGroup: 'gpu' }),
      node('old-2', 2, { gpus: 1, leaving: true, replacedGroup: 'gpu' }),
      node('new-1', 3),
      node('new-2', 4),
    ];
    expect(paidBeyondCeiling(small, none, 2, { ...group, minSize: 0 }, 4)).toBe(0.5);
  });

  it("counts the group's own nodes at their GPUs' share too, and its minimum at its nodes' GPUs", () => {
    // Found in review: own nodes counted one each. Three 4-GPU nodes (an update's surge beside two)
    // under a 1-GPU configuration and a cap of 8: 12 GPUs paid, 4 past it (counted as 3, none).
    const none = { terminated: () => false };
    const big = [node('a', 1), node('b', 2), node('surge', 3)];
    expect(paidBeyondCeiling(big, none, 8, { ...group, minSize: 0 }, 1)).toBe(4);
    // The minimum of 2 nodes is 8 GPUs of them: a cap of 1 leaves 4 past it.
    expect(paidBeyondCeiling(big, none, 1, { ...group, minSize: 2 }, 1)).toBe(4);
    // The other way: five 1-GPU nodes under a 4-GPU configuration and a cap of 2 (8 GPUs): 5 GPUs paid,
    // none past it (counted as 5 nodes, 3 past it: 3 of the 5 removed, the budget's GPUs left unused).
    const small = Array.from({ length: 5 }, (_, k) => node(`s${k}`, k, { gpus: 1 }));
    expect(paidBeyondCeiling(small, none, 2, { ...group, minSize: 0 }, 4)).toBe(0);
  });
});

describe('chooseUpdateVictims in GPUs', () => {
  it("takes as many nodes as cover the excess at each node's GPUs", () => {
    const nodes = [node('old', 1, { outdated: true }), node('a', 2), node('surge', 3)];
    const units = (n: PoolNode) => n.gpus; // a 1-GPU configuration: 4 units a node
    expect(chooseUpdateVictims(nodes, 4, () => 0, units).map((n) => n.id)).toEqual(['old']);
    expect(chooseUpdateVictims(nodes, 4.5, () => 0, units).map((n) => n.id)).toEqual(['old', 'a']);
    expect(chooseUpdateVictims(nodes, 0, () => 0, units)).toEqual([]);
  });
});
