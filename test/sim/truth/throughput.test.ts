import { describe, expect, it } from 'vitest';
import { parsePlacementsCsv, parseScalabilityCsv } from '../../../src/sim/truth/load.ts';
import { buildThroughputModel } from '../../../src/sim/truth/throughput.ts';

// Step time grows with batch and GPUs; sync time with GPUs. Numbers chosen to make blends easy to check.
const placements = parsePlacementsCsv(`placement,local_bsz,step_time,sync_time
1,10,1.0,0.0
1,20,2.0,0.0
12,10,1.5,0.3
12,20,2.5,0.3
4444,10,3.0,1.0
4444,20,4.0,1.0
`);
const scalability = parseScalabilityCsv(`num_nodes,num_replicas,local_bsz,step_time,sync_time
6,6,10,4.0,2.0
6,6,20,5.0,2.0
6,24,10,5.0,3.0
6,24,20,7.0,3.0
16,64,10,9.0,7.0
16,64,20,11.0,7.0
`);
const model = buildThroughputModel({ placements, scalability, validation: [] });

describe('measured placements', () => {
  it('are exact at measured rows, for every rotation', () => {
    expect(model.at([2, 1], 10)).toEqual({ stepTime: 1.5, syncTime: 0.3 });
    expect(model.at([1, 2], 20)).toEqual({ stepTime: 2.5, syncTime: 0.3 });
    expect(model.isMeasured([2, 1])).toBe(true);
    expect(model.siteId([2, 1])).toBe('12');
  });

  it('are linear in local batch between rows and clamped beyond them', () => {
    expect(model.at([1], 15).stepTime).toBeCloseTo(1.5, 12);
    expect(model.at([1], 12).stepTime).toBeCloseTo(1.2, 12);
    expect(model.at([1], 5).stepTime).toBe(1.0);
    expect(model.at([1], 40).stepTime).toBe(2.0);
  });
});

describe('unmeasured placements', () => {
  it('are exact at scalability rows', () => {
    expect(model.isMeasured([4, 4, 4, 4, 4, 4])).toBe(false);
    expect(model.at([4, 4, 4, 4, 4, 4], 20)).toEqual({ stepTime: 7.0, syncTime: 3.0 });
    expect(model.at([1, 1, 1, 1, 1, 1], 10)).toEqual({ stepTime: 4.0, syncTime: 2.0 });
  });

  it('blend neighbouring node columns at the same GPUs per node', () => {
    // 5 nodes x 4 GPUs: halfway between 4 nodes x 4 (3.0) and 6 nodes x 4 (5.0) at batch 10.
    const five = model.at([4, 4, 4, 4, 4], 10);
    expect(five.stepTime).toBeCloseTo(4.0, 12);
    expect(five.syncTime).toBeCloseTo(2.0, 12);
    // 6 nodes holding 15 GPUs (2.5 per node): linear in replicas between 6 and 24 at batch 20.
    expect(model.at([3, 3, 3, 2, 2, 2], 20).stepTime).toBeCloseTo(5 + (2 * 9) / 18, 12);
    // 10 nodes x 4 (40 GPUs): 8 nodes is no column here, so halfway between 6 x 4 and 16 x 4 is 11 nodes;
    // at 10 nodes the weight on 16 nodes is (10 - 6) / 10.
    expect(model.at(Array(10).fill(4), 10).stepTime).toBeCloseTo(5 + 0.4 * (9 - 5), 12);
  });

  it('cap the node count at the largest column, as Pollux did', () => {
    const wide = Array(20).fill(2); // 20 nodes, 40 GPUs -> read as 16 nodes holding 40 GPUs
    const sixteen = [...Array(8).fill(3), ...Array(8).fill(2)];
    expect(model.siteId(wide)).toBe('16n40r');
    expect(model.siteId(sixteen)).toBe('16n40r');
    expect(model.at(wide, 20)).toEqual(model.at(sixteen, 20));
    // Beyond the measured GPUs per node of a column, the nearest site is used.
    expect(model.at([8], 10)).toEqual(model.at([1], 10));
  });
});
