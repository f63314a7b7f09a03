/** The contract's replicas removed, stopped or ended outside the executor's own stops, and what each reports. */
import { expect, it } from 'vitest';
import { type ReplicaStatus } from '../../src/service/ports.ts';
import { type ContractContext, desiredJob, find } from './executor-contract-harness.ts';

export function outsideCases(ctx: ContractContext): void {
  const { harness, create, until, started } = ctx;

  it('reports a replica removed from outside as interrupted, and starts it again only in a new generation', async () => {
    const executor = await create();
    const job = desiredJob(harness, 7, 1, [1], harness.workload());
    const ref = { jobId: 7, generation: 1, rank: 0 };
    await until(executor, [job], () => started(ref), 'start');
    await harness.kill(ref);
    const statuses = await until(
      executor,
      [job],
      (s) => find(s, ref)?.interrupted === true,
      'the removed replica reported interrupted',
    );
    expect(find(statuses, ref)).toMatchObject({ phase: 'failed', interrupted: true });
    expect(find(statuses, ref)?.ranForMs).toBeGreaterThanOrEqual(0);
    // Not alone in its old generation: a multi-node job's peers would wait on a rendezvous it left.
    for (let i = 0; i < 3; i++) {
      expect(find(await executor.reconcile([job]), ref)?.interrupted).toBe(true);
    }
    expect(await harness.starts(ref)).toHaveLength(1);
    const next = desiredJob(harness, 7, 2, [1], harness.workload());
    const nextRef = { jobId: 7, generation: 2, rank: 0 };
    await until(
      executor,
      [next],
      async (s) => (await started(nextRef)) && find(s, nextRef)?.phase === 'running',
      'the next generation',
    );
    expect(await harness.running(ref)).toBe(0);
  });

  it('never reports a replica stopped from outside as succeeded, even when it exits 0', async () => {
    const executor = await create();
    const job = desiredJob(harness, 11, 1, [1], harness.workload({ termExitsZero: true }));
    const ref = { jobId: 11, generation: 1, rank: 0 };
    // Its program started, so it has its SIGTERM handler.
    await until(executor, [job], () => started(ref), 'start');
    await harness.interrupt(ref);
    const seen: Array<ReplicaStatus | undefined> = [];
    // Reported interrupted whether its exit (0) was seen or it was gone first; never started again.
    const statuses = await until(
      executor,
      [job],
      (s) => {
        seen.push(find(s, ref));
        return find(s, ref)?.interrupted === true;
      },
      'the interrupted replica reported',
    );
    expect(seen.filter((s) => s?.phase === 'succeeded')).toEqual([]);
    // Said as soon as it is seen: still stopping (a pod deleted while it runs, kubernetes/pods.ts) or
    // ended. A loaded machine saw the first (a CI run), which this once read as a failure.
    const reported = find(statuses, ref);
    expect(reported?.interrupted).toBe(true);
    expect(['stopping', 'failed']).toContain(reported?.phase);
    expect(await harness.starts(ref)).toHaveLength(1);
  });

  it('reports a replica that ended on its own after its generation is no longer wanted, as it ended', async () => {
    const executor = await create(1);
    const ref = { jobId: 12, generation: 1, rank: 0 };
    const gen1 = desiredJob(harness, 12, 1, [1], harness.workload());
    await until(executor, [gen1], () => started(ref), 'start');
    await harness.exit(ref, 0);
    await until(executor, [gen1], (s) => find(s, ref)?.phase === 'succeeded', 'exit seen');
    // The job was rescaled before the service saw that exit: the next reconcile still says it.
    const gen2 = desiredJob(harness, 12, 2, [1], harness.workload());
    const next = { jobId: 12, generation: 2, rank: 0 };
    const seen: Array<ReplicaStatus | undefined> = [];
    await until(
      executor,
      [gen2],
      async (s) => {
        seen.push(find(s, ref));
        return started(next);
      },
      'the next generation',
    );
    expect(seen[0]).toMatchObject({ phase: 'succeeded', exitCode: 0 });
    expect(seen[0]?.interrupted).toBeFalsy();
  });

  it('never reports a replica its own stop ended as succeeded, even when it exits 0 on SIGTERM', async () => {
    const executor = await create(1);
    const ref = { jobId: 13, generation: 1, rank: 0 };
    const gen1 = desiredJob(harness, 13, 1, [1], harness.workload({ termExitsZero: true }));
    await until(executor, [gen1], () => started(ref), 'start');
    const gen2 = desiredJob(harness, 13, 2, [1], harness.workload());
    const next = { jobId: 13, generation: 2, rank: 0 };
    const seen: ReplicaStatus[] = [];
    await until(
      executor,
      [gen2],
      async (s) => {
        const old = find(s, ref);
        if (old) seen.push(old);
        return (await started(next)) && find(s, ref) === undefined;
      },
      'the old generation stopped and the next started',
    );
    expect(await harness.terminations(ref)).toBe(1);
    expect(seen.filter((s) => s.phase === 'succeeded' && !s.interrupted)).toEqual([]);
  });
}
