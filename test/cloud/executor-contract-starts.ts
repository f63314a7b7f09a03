/** The contract's starts: one replica per node slice, exits reported and kept, each started once. */
import { expect, it } from 'vitest';
import { type ContractContext, desiredJob, find, type ReplicaRef } from './executor-contract-harness.ts';

export function startCases(ctx: ContractContext): void {
  const { harness, create, until, started, settleMs } = ctx;

  it('starts one replica per node slice with its environment and reports it running', async () => {
    const executor = await create();
    const job = desiredJob(harness, 1, 1, [2, 1], harness.workload());
    const refs = [0, 1].map((rank) => ({ jobId: 1, generation: 1, rank }));
    const statuses = await until(
      executor,
      [job],
      async (s) =>
        refs.every((r) => find(s, r)?.phase === 'running') &&
        (await started(refs[1] as ReplicaRef)) &&
        (await started(refs[0] as ReplicaRef)),
      'both replicas running',
    );
    expect(statuses.filter((s) => s.jobId === 1)).toHaveLength(2);
    const env = (await harness.starts(refs[1] as ReplicaRef))[0];
    expect(env).toMatchObject({ WORLD_SIZE: '3', NNODES: '2', NODE_RANK: '1', NPROC_PER_NODE: '1' });
    expect(find(statuses, refs[1] as ReplicaRef)?.node).toBe(harness.nodes[1]);
  });

  it('reports exits with their codes, keeps ended replicas reported and does not restart them', async () => {
    const executor = await create();
    const job = desiredJob(harness, 2, 1, [1, 1], harness.workload());
    const [rank0, rank1] = [0, 1].map((rank) => ({ jobId: 2, generation: 1, rank })) as [
      ReplicaRef,
      ReplicaRef,
    ];
    await until(executor, [job], async () => (await started(rank0)) && (await started(rank1)), 'start');
    await harness.exit(rank1, 3);
    await harness.exit(rank0, 0);
    const statuses = await until(
      executor,
      [job],
      (s) => find(s, rank0)?.phase === 'succeeded' && find(s, rank1)?.phase === 'failed',
      'both ended',
    );
    expect(find(statuses, rank0)?.exitCode).toBe(0);
    expect(find(statuses, rank1)?.exitCode).toBe(3);
    // How long each ran: known, and no longer than the test has run.
    for (const ref of [rank0, rank1]) {
      expect(find(statuses, ref)?.ranForMs).toBeGreaterThanOrEqual(0);
      expect(find(statuses, ref)?.ranForMs).toBeLessThan(settleMs + 60_000);
    }
    for (let i = 0; i < 3; i++) await executor.reconcile([job]);
    expect(await harness.starts(rank1)).toHaveLength(1);
    expect(find(await executor.reconcile([job]), rank1)?.phase).toBe('failed');
  });

  it('is idempotent: repeated reconciles start each replica once', async () => {
    const executor = await create();
    const job = desiredJob(harness, 3, 1, [1, 1], harness.workload());
    const refs = [0, 1].map((rank) => ({ jobId: 3, generation: 1, rank }));
    for (let i = 0; i < 5; i++) await executor.reconcile([job]);
    await until(
      executor,
      [job],
      async () => (await started(refs[0] as ReplicaRef)) && (await started(refs[1] as ReplicaRef)),
      'start',
    );
    for (let i = 0; i < 5; i++) await executor.reconcile([job]);
    for (const ref of refs) {
      expect(await harness.starts(ref)).toHaveLength(1);
      expect(await harness.running(ref)).toBe(1);
    }
  });
}
