/**
 * GPUs a replica boa stops still holds (its grace, before SIGKILL) go to no other job until the executor
 * reports it ended: the next job is not booked running there meanwhile (the executor would hold its
 * replicas back, the kubelet refuse its pod), goes to a free node elsewhere when there is one, and says
 * what it waits for when there is none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { outcome } from '../../src/cli/commands/jobs.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GraceExecutor } from '../helpers/grace-executor.ts';
import { graceService } from './grace-service.ts';
import { ManualClock } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const serviceWith = (
  maxNodes: number,
  restart?: { dataDir: string; executor: GraceExecutor; clock: ManualClock },
) => graceService(cleanups, { maxNodes, ...(restart ? { restart } : {}) });

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

  it('leave a free node elsewhere to the next job, which waits for them when they make its whole width', async () => {
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
    // b's width is both nodes: started on c's alone, it would be restarted at its width once a's replica
    // ended (a grace at most later). It waits for a instead, and starts once, at its width.
    let seen = await view(b);
    expect(seen.widths).toEqual([8, 8]);
    expect(seen.state).toBe('waiting');
    expect(seen.waitingFor).toBe('stopping');
    expect(seen.heldBy.jobs).toEqual([a]);
    expect(executor.nodesOf(b)).toEqual([]);
    // a's replica still stops on its node.
    expect(s.service.state.liveReplicas.some((r) => r.jobId === a && r.node === aNode)).toBe(true);
    executor.end(a);
    s.service.execution.reconcile();
    await s.service.execution.settle();
    await tick();
    seen = await view(b);
    expect(seen.state).toBe('running');
    expect(seen.width).toBe(8);
    expect(new Set(s.service.job(b).allocation)).toEqual(new Set([aNode, cNode]));
    expect(new Set(executor.nodesOf(b))).toEqual(new Set([aNode, cNode]));
    expect(seen.restarts).toBe(0);
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
