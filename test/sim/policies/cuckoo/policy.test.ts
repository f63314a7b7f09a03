import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { parseTrace } from '../../../../src/core/trace.ts';
import type { TickSnapshot } from '../../../../src/sim/engine/engine.ts';
import { parseClusterSpec } from '../../../../src/sim/gpu-types.ts';
import { cuckooPolicy, fifoPolicy, muriPolicy } from '../../../../src/sim/policies/cuckoo/index.ts';
import { simulate, truthProvider } from '../../../../src/sim/run.ts';
import { POLLUX, REPO } from '../../../helpers/run-script.ts';
import { policyContext } from '../fakes.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const truthOf = truthProvider(POLLUX);
// The first 40 jobs of workload-1 on a mixed cluster: 8 t4 GPUs and 8 v100.
const trace = parseTrace(readFileSync(resolve(POLLUX, 'workloads/workload-1.csv'), 'utf8')).slice(0, 40);

function run(policy: string) {
  const ticks: TickSnapshot[] = [];
  const { result } = simulate({
    trace,
    policy,
    options: {},
    seed: 3,
    profiles,
    truthOf,
    observer: (tick) => ticks.push(tick),
    config: { cluster: parseClusterSpec('g4dn:2,p3:2') },
  });
  return { result, ticks };
}

describe('cuckoo, muri and fifo on a heterogeneous cluster', () => {
  it('refuse a missing budget, each naming itself', () => {
    for (const def of [cuckooPolicy, muriPolicy, fifoPolicy]) {
      expect(() => def.create(policyContext(), {})).toThrow(new RegExp(`^${def.name}: .*--budget`));
    }
  });

  it.each(['cuckoo', 'muri', 'fifo'])(
    '%s finishes every job, runs each job on one GPU type, and never moves a running job',
    (policy) => {
      const { result, ticks } = run(policy);
      expect(result.completed).toBe(trace.length);
      const typeOf = new Map(ticks[0]?.cluster.nodes.map((n) => [n.id, n.gpuType]));
      const placed = new Map<number, string>();
      for (const tick of ticks) {
        for (const [id, allocation] of tick.allocations) {
          if (allocation.length === 0) continue;
          expect(new Set(allocation.map((n) => typeOf.get(n))).size).toBe(1);
          const key = allocation.join(',');
          const before = placed.get(id);
          if (before !== undefined) expect(key).toBe(before);
          placed.set(id, key);
        }
      }
      const groups = ticks.flatMap((t) => t.colocate);
      if (policy === 'fifo') expect(groups).toEqual([]);
    },
  );

  it('cuckoo and muri pack some jobs in pairs on identical GPUs; the two differ in which', () => {
    const pairsOf = (policy: string) => {
      const { ticks } = run(policy);
      const pairs = new Set<string>();
      for (const tick of ticks) {
        for (const group of tick.colocate) {
          expect(group).toHaveLength(2);
          const [a, b] = group.map((id) => tick.allocations.get(id)?.join(','));
          expect(a).toBe(b);
          pairs.add([...group].sort((x, y) => x - y).join('-'));
        }
      }
      return pairs;
    };
    const cuckoo = pairsOf('cuckoo');
    const muri = pairsOf('muri');
    expect(cuckoo.size).toBeGreaterThan(0);
    expect(muri.size).toBeGreaterThan(0);
    expect([...cuckoo].sort()).not.toEqual([...muri].sort());
  });
});
