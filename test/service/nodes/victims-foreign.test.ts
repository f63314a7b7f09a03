import { describe, expect, it } from 'vitest';
import { chooseVictimsForeignLast } from '../../../src/service/nodes/victims.ts';
import type { PoolNode } from '../../../src/service/ports.ts';

const node = (id: string, foreignGpus = 0): PoolNode => ({
  id,
  launchedAt: 1,
  gpus: 4,
  ready: true,
  ...(foreignGpus ? { foreignGpus } : {}),
});

describe('chooseVictimsForeignLast', () => {
  it("ranks another's GPU pods as load: after idle nodes, but chosen when the count asks", () => {
    const nodes = [node('busy'), node('notebook', 2), node('idle')];
    const busy = (name: string) => (name === 'busy' ? 4 : 0);
    expect(chooseVictimsForeignLast(nodes, 1, busy).map((n) => n.id)).toEqual(['idle']);
    expect(chooseVictimsForeignLast(nodes, 2, busy).map((n) => n.id)).toEqual(['idle', 'notebook']);
    expect(chooseVictimsForeignLast(nodes, 3, busy).map((n) => n.id)).toEqual(['idle', 'notebook', 'busy']);
  });
});
