/**
 * GPUs a replica boa stops still holds (its grace, before SIGKILL) go to no other job until the executor
 * reports it ended: the next job is not booked running there meanwhile (the executor would hold its
 * replicas back, the kubelet refuse its pod), goes to a free node elsewhere when there is one, and says
 * what it waits for when there is none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { outcome } from '../../src/cli/commands/jobs.ts';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { replicaKey } from '../../src/service/stopping-replicas.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, startService } from './harness.ts';

const GRACE_MS = 120_000;

/**
 * An executor whose replicas run until boa no longer wants them, then stop for their whole grace unless
 * the test ends them (end): as a replica that ignores SIGTERM, or checkpoints slowly, does.
 */
class GraceExecutor implements Executor {
  readonly kind = 'local' as const;
  private readonly replicas = new Map<string, ReplicaStatus>();
  private readonly ending = new Set<number>();

  constructor(public now: () => number) {}

  async reconcile(desired: readonly DesiredJob[]): Promise<readonly ReplicaStatus[]> {
    const wanted = new Set<string>();
    for (const job of desired)
      for (const spec of job.replicas) {
        const key = replicaKey(spec);
        wanted.add(key);
        if (!this.replicas.has(key))
          this.replicas.set(key, { ...spec, phase: 'running', node: spec.node } as ReplicaStatus);
      }
    for (const [key, r] of this.replicas) {
      if (wanted.has(key)) continue;
      if (this.ending.has(r.jobId)) this.replicas.delete(key);
      else if (r.phase !== 'stopping')
        this.replicas.set(key, { ...r, phase: 'stopping', killAt: this.now() + GRACE_MS });
    }
    return [...this.replicas.values()].map(({ jobId, generation, rank, node, phase, killAt }) => ({
      jobId,
      generation,
      rank,
      node,
      phase,
      ...(killAt === undefined ? {} : { killAt }),
    }));
  }

  /** The job's stopping replicas end (at the next reconcile). */
  end(jobId: number): void {
    this.ending.add(jobId);
  }

  nodesOf(jobId: number): string[] {
    return [...this.replicas.values()].filter((r) => r.jobId === jobId).map((r) => r.node);
  }

  async close(): Promise<void> {}
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function serviceWith(
  maxNodes: number,
  restart?: { dataDir: string; executor: GraceExecutor; clock: ManualClock },
) {
  let clockNow = () => 0;
  const executor = restart?.executor ?? new GraceExecutor(() => clockNow());
  const s = await startService({
    executor,
    ...(restart ? { dataDir: restart.dataDir, clock: restart.clock } : {}),
    config: {
      priorRates: { bert: 1 },
      local: { maxNodes, bootSeconds: 0, releaseSeconds: 0 },
      terminationGraceSeconds: GRACE_MS / 1000,
    },
  });
  clockNow = () => s.clock.now();
  executor.now = clockNow;
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
  await s.service.planner.idle();
  /** One tick after the clock moved on, and the executor's pass it asks for. */
  const tick = async () => {
    s.clock.advance(30);
    await s.ticks(1);
    s.service.execution.reconcile();
    await s.service.execution.settle();
  };
  const submit = async () => {
    const res = await s.request('POST', '/v1/jobs', {
      class: 'bert',
      workload: { command: ['sleep', '600'] },
    });
    expect(res.status).toBe(201);
    return res.body.id as number;
  };
  const view = async (id: number) => (await s.request('GET', `/v1/jobs/${id}`)).body;
  /** Ticks until every job is running with its replicas out, at most a few ticks (nodes boot). */
  const running = async (ids: number[]) => {
    for (let i = 0; i < 6 && !ids.every((id) => executor.nodesOf(id).length > 0); i++) await tick();
    for (const id of ids) expect(s.service.job(id).state).toBe('running');
  };
  return { s, executor, tick, submit, view, running };
}

describe('GPUs a stopping replica holds', () => {
  it('go to no other job on its node until it has ended: that job waits, says why, and is not booked', async () => {
    const { s, executor, tick, submit, view, running } = await serviceWith(1);
    const a = await submit();
    await running([a]);
    const node = executor.nodesOf(a)[0] as string;
    expect((await s.request('POST', `/v1/jobs/${a}/cancel`)).status).toBe(200);
    const b = await submit();
    await tick();
    const heldFrom = s.clock.now();
    let seen = await view(b);
    expect(seen.state).toBe('waiting');
    expect(seen.allocation ?? []).toEqual([]);
    expect(s.service.state.allocatedGpus).toBe(0);
    expect(seen.waitingFor).toBe('stopping');
    expect(seen.heldBy.jobs).toEqual([a]);
    // The executor has sent the stop: SIGKILL's time is known, and the CLI says it.
    await tick();
    seen = await view(b);
    expect(seen.state).toBe('waiting');
    expect(Date.parse(seen.heldBy.killAt)).toBeGreaterThan(s.clock.now());
    expect(outcome(seen, s.clock.now())).toMatch(
      new RegExp(`^waits for GPUs stopping replicas of job ${a} still hold \\(SIGKILL in \\d+ (s|min)\\)$`),
    );
    // Nothing was booked as allocated while the replica held the node.
    const samples = s.service.deps.repo.ledger.allocationSince(heldFrom - 1);
    expect(samples.length).toBeGreaterThan(0);
    for (const sample of samples) expect(sample.gpus).toBe(0);

    executor.end(a);
    s.service.execution.reconcile();
    await s.service.execution.settle();
    expect(s.service.state.liveReplicas.filter((r) => r.jobId === a)).toEqual([]);
    await tick();
    seen = await view(b);
    expect(seen.state).toBe('running');
    expect(seen.waitingFor ?? null).toBeNull();
    expect(executor.nodesOf(b)).toEqual([node]);
    expect(s.service.state.allocatedGpus).toBeGreaterThan(0);
  });

  it('leave a free node elsewhere to the next job at once', async () => {
    const { s, executor, tick, submit, view, running } = await serviceWith(2);
    const a = await submit();
    const c = await submit();
    await running([a, c]);
    const [aNode] = executor.nodesOf(a);
    const [cNode] = executor.nodesOf(c);
    // Each on a node of its own: the one a's replica stops on, and the one c leaves free.
    expect(aNode).not.toBe(cNode);
    expect(executor.nodesOf(a)).toEqual([aNode]);
    // c ends at once, a stops for its grace.
    expect((await s.request('POST', `/v1/jobs/${c}/cancel`)).status).toBe(200);
    executor.end(c);
    s.service.execution.reconcile();
    await s.service.execution.settle();
    expect(executor.nodesOf(c)).toEqual([]);
    expect((await s.request('POST', `/v1/jobs/${a}/cancel`)).status).toBe(200);
    const b = await submit();
    await tick();
    expect((await view(b)).state).toBe('running');
    expect(new Set(s.service.job(b).allocation)).toEqual(new Set([cNode]));
    expect(executor.nodesOf(b)).toEqual([cNode]);
    // a's replica still stops on its node.
    expect(s.service.state.liveReplicas.some((r) => r.jobId === a && r.node === aNode)).toBe(true);
  });

  it("are known after a restart of boa from the executor's first answer, before the first tick", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-stopping-restart-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const first = await serviceWith(1, { dataDir, executor: new GraceExecutor(() => clock.now()), clock });
    const a = await first.submit();
    await first.running([a]);
    expect((await first.s.request('POST', `/v1/jobs/${a}/cancel`)).status).toBe(200);
    await first.tick();
    await first.s.close();
    // The same replicas (a local executor adopts its records, Kubernetes lists its pods): a's still stops.
    const again = await serviceWith(1, { dataDir, executor: first.executor, clock });
    expect(again.s.service.state.liveReplicas.some((r) => r.jobId === a)).toBe(true);
    const b = await again.submit();
    // The emulated pool lists its node again as it would boot (not ready at the first tick).
    for (let i = 0; i < 3 && !again.s.service.state.nodes.some((n) => n.ready); i++) await again.tick();
    await again.tick();
    expect(again.s.service.state.nodes.some((n) => n.ready)).toBe(true);
    const seen = await again.view(b);
    expect(seen.state).toBe('waiting');
    expect(seen.waitingFor).toBe('stopping');
    expect(again.s.service.state.allocatedGpus).toBe(0);
  });
});
