import { describe, expect, it } from 'vitest';
import { DEFAULT_INTERFERENCE, type StageProfile } from '../../../../src/sim/policies/cuckoo/interleave.ts';
import { GroupScheduler } from '../../../../src/sim/policies/cuckoo/group-scheduler.ts';
import {
  EFFICIENCY_WEIGHT,
  estimatePair,
  type PackCandidate,
  packJobs,
  type PackOptions,
} from '../../../../src/sim/policies/cuckoo/packing.ts';
import type { GpuType, HardwareView } from '../../../../src/sim/policy.ts';
import { clusterView, jobView, nodes, policyContext, profileFile } from '../fakes.ts';

// Section 3.3.2: a pair is scored on a GPU type that is free now. Two shapes of the same job, one per
// type, at the policy's interference: on v100 forward and communication alternate and two such jobs
// interleave (1.33); on t4 backward and communication contend and the pair runs slower than one after
// the other (0.59).
const interleaves: StageProfile = { loadMs: 0, forwardMs: 100, backwardMs: 0, commMs: 100 };
const contends: StageProfile = { loadMs: 0, forwardMs: 0, backwardMs: 160, commMs: 160 };
const TYPES: GpuType[] = ['v100', 't4'];
const job = (): PackCandidate => ({
  width: 1,
  stages: [interleaves, contends],
  secondsAlone: [100, 100],
  deadlineIn: 10_000,
  profileKey: 'same@1',
});
const cuckoo: PackOptions = {
  efficiencyWeight: EFFICIENCY_WEIGHT,
  deadlineFallback: true,
  interference: DEFAULT_INTERFERENCE,
};

describe('CUCKOO scores a pair only on GPU types with free GPUs (section 3.3.2)', () => {
  it('with one type free, the pair is estimated on that type, not on a busy better one', () => {
    const cache = new Map();
    const anyType = estimatePair(job(), job(), cuckoo.interference, cache);
    expect(anyType.type).toBe(0);
    expect(anyType.efficiency).toBeGreaterThan(1.3);
    // Same cache and profile keys: the t4-only estimate must not be the cached best of both.
    const t4Only = estimatePair(job(), job(), cuckoo.interference, cache, [1]);
    expect(t4Only.type).toBe(1);
    expect(t4Only.efficiency).toBeLessThan(1);
  });

  it('packs the pair when v100 is free, runs them alone when only t4 is', () => {
    expect(packJobs([job(), job()], { ...cuckoo, freeTypes: [0, 1] })).toHaveLength(1);
    expect(packJobs([job(), job()], { ...cuckoo, freeTypes: [1] })).toEqual([]);
  });

  it('the policy does not co-locate on t4 a pair that interleaves only on the busy v100', () => {
    const hardware: HardwareView = {
      types: TYPES,
      stages: (_app, type) => (type === 'v100' ? interleaves : contends),
      speedFactor: () => 1,
    };
    const profiles = profileFile([
      { name: 'lin', weight: 1, rescaleSeconds: 30, epochs: [{ workSeconds: 1200, speedup: { '1': 1 } }] },
    ]);
    const scheduler = new GroupScheduler(policyContext({ profiles, hardware, maxGroupSize: 2 }), 'cuckoo');
    // Node 0 (v100) is full; node 1 (t4) has one GPU free, so a pair would fit where two singles do not.
    const cluster = clusterView([...nodes(1, { gpuType: 'v100' }), ...nodes(1, { gpuType: 't4' }, 1)]);
    const running = [jobView(1, { allocation: [0, 0, 0, 0] }), jobView(2, { allocation: [1, 1, 1] })];
    const decision = scheduler.decide(cluster, [...running, jobView(3), jobView(4)]);
    expect(decision.colocate).toEqual([]);
    const started = [3, 4].filter((id) => (decision.allocations.get(id) ?? []).length > 0);
    expect(started).toHaveLength(1);
    expect(decision.allocations.get(started[0] as number)).toEqual([1]);
  });
});
