/**
 * The one suite every registered policy must pass: the engine's invariants checked independently of the
 * engine's own checks, on a small mixed trace in a feasible setting (every job must finish).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../src/core/profile.ts';
import type { TraceJob } from '../../../src/core/trace.ts';
import type { TickSnapshot } from '../../../src/sim/engine/engine.ts';
import type { PolicyDefinition, PolicyOptions } from '../../../src/sim/policy.ts';
import { parseClusterSpec } from '../../../src/sim/gpu-types.ts';
import { findPolicy, POLICIES } from '../../../src/sim/policies/index.ts';
import { simulate, truthProvider } from '../../../src/sim/run.ts';
import { POLLUX, REPO } from '../../helpers/run-script.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const truthOf = truthProvider(POLLUX);

// Ten jobs over 40 minutes: short (ncf), one-hour (cifar10) and multi-hour (bert, deepspeech2) jobs,
// some arriving together, with assorted user requests.
const row = (name: string, time: number, application: string, numReplicas: number): TraceJob => ({
  name,
  time,
  application,
  numReplicas,
  batchSize: 0,
});
const TRACE: TraceJob[] = [
  row('cifar10-0', 0, 'cifar10', 1),
  row('ncf-1', 60, 'ncf', 1),
  row('cifar10-2', 120, 'cifar10', 4),
  row('cifar10-3', 120, 'cifar10', 8),
  row('bert-4', 600, 'bert', 4),
  row('cifar10-5', 900, 'cifar10', 6),
  row('deepspeech2-6', 1200, 'deepspeech2', 6),
  row('cifar10-7', 1500, 'cifar10', 1),
  row('ncf-8', 2000, 'ncf', 1),
  row('cifar10-9', 2400, 'cifar10', 12),
];
// About 1.9x the minimum feasible budget of these arrival rates; a 40-GPU cluster for fixed policies.
const KNOBS: Record<PolicyDefinition['knob'], PolicyOptions> = {
  budget: { budget: 40 },
  target: { target: 0.8 },
  price: { price: 0.3 },
};

function runPolicy(definition: PolicyDefinition, seed = 7, cluster?: string) {
  const ticks: TickSnapshot[] = [];
  const { result, run } = simulate({
    trace: TRACE,
    policy: definition.name,
    options: KNOBS[definition.knob],
    seed,
    profiles,
    truthOf,
    observer: (tick) => ticks.push(tick),
    ...(cluster ? { config: { cluster: parseClusterSpec(cluster) } } : {}),
  });
  return { result, run, ticks };
}

/** GPUs used per node at a tick: a co-location group's shared GPUs once, and its members on the same GPUs. */
function gpusUsed(tick: TickSnapshot): Map<number, number> {
  const followers = new Set<number>();
  for (const group of tick.colocate) {
    const first = tick.allocations.get(group[0] as number);
    for (const id of group.slice(1)) {
      expect(tick.allocations.get(id), `tick ${tick.tick}: group member ${id} on its group's GPUs`).toEqual(
        first,
      );
      followers.add(id);
    }
  }
  const used = new Map<number, number>();
  for (const [jobId, allocation] of tick.allocations) {
    if (followers.has(jobId)) continue;
    for (const id of allocation) used.set(id, (used.get(id) ?? 0) + 1);
  }
  return used;
}

describe('the registry', () => {
  it('has unique, well-formed policy definitions', () => {
    const names = POLICIES.map((p) => p.name);
    expect(new Set(names).size).toBe(names.length);
    for (const p of POLICIES) {
      expect(p.name).toMatch(/^[a-z][a-z0-9-]*$/);
      expect(p.describe.length).toBeGreaterThan(10);
      expect(['fixed', 'autoscaled']).toContain(p.mode);
      expect(['budget', 'target', 'price']).toContain(p.knob);
    }
  });

  it('finds a policy by name and lists the allowed names otherwise', () => {
    expect(findPolicy('fixed-request').name).toBe('fixed-request');
    expect(() => findPolicy('nope')).toThrow(
      new RegExp(`unknown policy "nope"; allowed: ${POLICIES.map((p) => p.name).join(', ')}`),
    );
  });
});

describe.each(POLICIES.map((p) => [p.name, p] as const))('policy %s', (_name, definition) => {
  const { result, run, ticks } = runPolicy(definition);

  it('finishes every job in a feasible setting', () => {
    expect(run.finished).toBe(true);
    expect(result.completed).toBe(TRACE.length);
    expect(result.jobs).toBe(TRACE.length);
    for (const job of run.jobs) expect(job.completedAt).toBeGreaterThan(job.arrival);
  });

  it('never puts more GPUs on a node than it has, and only on ready nodes', () => {
    for (const tick of ticks) {
      const nodes = new Map(tick.cluster.nodes.map((n) => [n.id, n]));
      const used = gpusUsed(tick);
      for (const [id, gpus] of used) {
        const node = nodes.get(id);
        expect(node, `tick ${tick.tick}: node ${id} exists`).toBeDefined();
        expect(node?.readyAt).toBeLessThanOrEqual(tick.cluster.now);
        expect(gpus).toBeLessThanOrEqual(node?.gpus ?? 0);
      }
      expect(tick.cluster.nodes.length).toBeLessThanOrEqual(tick.cluster.maxNodes);
    }
  });

  it('loses no job: every arrived job stays active until it completes', () => {
    const byId = new Map(run.jobs.map((j) => [j.id, j]));
    for (const tick of ticks) {
      const now = tick.cluster.now;
      const expected = run.jobs
        .filter((j) => j.arrival <= now && (j.completedAt === null || j.completedAt > now))
        .map((j) => j.id);
      expect(new Set(tick.activeJobs)).toEqual(new Set(expected));
      for (const id of tick.allocations.keys()) expect(byId.get(id)?.arrival).toBeLessThanOrEqual(now);
    }
  });

  it('pays for at least what it allocates, and reports sane metrics', () => {
    expect(result.paidGpuHoursPerHour).toBeGreaterThanOrEqual(result.allocatedGpuHoursPerHour - 1e-9);
    expect(result.allocatedGpuHoursPerHour).toBeGreaterThan(0);
    expect(result.p95JctSeconds).toBeGreaterThanOrEqual(result.avgJctSeconds * 0.5);
    expect(result.avgQueueSeconds).toBeGreaterThanOrEqual(0);
    expect(result.rescales).toBeGreaterThanOrEqual(0);
  });

  it('is deterministic for a seed', () => {
    const again = runPolicy(definition);
    expect({ ...again.result, simMs: 0 }).toEqual({ ...result, simMs: 0 });
  });

  // Fixed-cluster policies also run on a mixed cluster (t4 and v100 nodes); the autoscalers refuse one.
  it.runIf(definition.mode === 'fixed')(
    'finishes every job on a heterogeneous cluster, within its nodes',
    () => {
      const mixed = runPolicy(definition, 7, 'g4dn:6,p3:4');
      expect(mixed.run.finished).toBe(true);
      expect(mixed.result.cluster).toBe('g4dn:6,p3:4');
      for (const tick of mixed.ticks) {
        const nodes = new Map(tick.cluster.nodes.map((n) => [n.id, n]));
        for (const [id, gpus] of gpusUsed(tick)) expect(gpus).toBeLessThanOrEqual(nodes.get(id)?.gpus ?? 0);
      }
      expect(Object.keys(mixed.result.utilizationByType).sort()).toEqual(['t4', 'v100']);
    },
  );

  it.runIf(definition.mode === 'autoscaled')('refuses a heterogeneous cluster with a clear message', () => {
    expect(() => runPolicy(definition, 7, 'g4dn:6,p3:4')).toThrow(/autoscales one g4dn \(t4\) node group/);
  });
});
