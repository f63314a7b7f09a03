/** The contract across a restart: running replicas adopted, replicas of jobs no longer desired removed. */
import { expect, it } from 'vitest';
import { type ContractContext, desiredJob, find, type ReplicaRef } from './executor-contract-harness.ts';

export function adoptionCases(ctx: ContractContext): void {
  const { harness, create, until, started } = ctx;

  it('adopts running replicas in a new executor instance without starting them again', async () => {
    const first = await create();
    const job = desiredJob(harness, 8, 1, [1, 1], harness.workload());
    const refs = [0, 1].map((rank) => ({ jobId: 8, generation: 1, rank })) as ReplicaRef[];
    await until(
      first,
      [job],
      async () => (await started(refs[0] as ReplicaRef)) && (await started(refs[1] as ReplicaRef)),
      'start',
    );
    await first.close();
    const second = await create();
    const statuses = await until(
      second,
      [job],
      (s) => refs.every((r) => find(s, r)?.phase === 'running'),
      'adopted',
    );
    expect(statuses.filter((s) => s.jobId === 8)).toHaveLength(2);
    for (const ref of refs) expect(await harness.starts(ref)).toHaveLength(1);
    // The adopted replicas' exits are seen too.
    await harness.exit(refs[0] as ReplicaRef, 0);
    await until(second, [job], (s) => find(s, refs[0] as ReplicaRef)?.phase === 'succeeded', 'exit seen');
  });

  it('removes replicas of jobs no longer desired, ended or running, also after a restart', async () => {
    const first = await create();
    const a = { jobId: 9, generation: 1, rank: 0 };
    const b = { jobId: 10, generation: 1, rank: 0 };
    const jobs = [
      desiredJob(harness, 9, 1, [1], harness.workload()),
      desiredJob(harness, 10, 1, [1], harness.workload()),
    ];
    await until(first, jobs, async () => (await started(a)) && (await started(b)), 'start');
    await harness.exit(a, 1);
    await until(first, jobs, (s) => find(s, a)?.phase === 'failed', 'a ended');
    await first.close();
    const second = await create();
    await until(second, [], (s) => s.length === 0, 'all removed');
    expect(await harness.running(b)).toBe(0);
    expect(await harness.terminations(b)).toBe(1);
  });
}
