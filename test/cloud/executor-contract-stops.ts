/** The contract's stops: SIGTERM first, SIGKILL after the grace; nodes that go; a new generation after the old. */
import { expect, it } from 'vitest';
import { type ContractContext, desiredJob, find } from './executor-contract-harness.ts';

export function stopCases(ctx: ContractContext): void {
  const { harness, create, until, started, options } = ctx;

  it('stops a replica no longer desired with SIGTERM first, and removes it once gone', async () => {
    const executor = await create();
    const job = desiredJob(harness, 4, 1, [1], harness.workload());
    const ref = { jobId: 4, generation: 1, rank: 0 };
    await until(executor, [job], () => started(ref), 'start');
    await until(executor, [], (s) => find(s, ref) === undefined, 'replica removed');
    expect(await harness.terminations(ref)).toBe(1);
    expect(await harness.running(ref)).toBe(0);
  });

  it('kills a replica that ignores SIGTERM after the grace period, not before', async () => {
    const executor = await create(1);
    const job = desiredJob(harness, 5, 1, [1], harness.workload({ ignoreTerm: true }));
    const ref = { jobId: 5, generation: 1, rank: 0 };
    await until(executor, [job], () => started(ref), 'start');
    const stopAt = Date.now();
    await until(executor, [], async () => (await harness.terminations(ref)) === 1, 'SIGTERM');
    expect(find(await executor.reconcile([]), ref)?.phase).toBe('stopping');
    await until(executor, [], (s) => find(s, ref) === undefined, 'killed after grace');
    expect(Date.now() - stopAt).toBeGreaterThanOrEqual(900);
    expect(await harness.running(ref)).toBe(0);
  });

  it.runIf(options.nodesGo)(
    "makes no replica on a node it does not list: the job's missing ones are reported starting, naming it, and made once it is back",
    async () => {
      const [live, gone] = harness.nodes as [string, string];
      await harness.removeNode!(gone);
      // Before the executor's first pass, as after a restart while the node went.
      const executor = await create();
      const job = desiredJob(harness, 12, 1, [1, 1], harness.workload());
      expect(job.replicas.map((r) => r.node)).toEqual([live, gone]);
      const refs = [0, 1].map((rank) => ({ jobId: 12, generation: 1, rank }));
      // Every pass, not only the first: the rank on the live node is held too (the job needs both).
      for (let pass = 0; pass < 3; pass++) {
        const statuses = await executor.reconcile([job]);
        for (const ref of refs)
          expect(find(statuses, ref)).toMatchObject({
            phase: 'starting',
            reason: expect.stringContaining(`node ${gone} is not in the cluster`) as string,
          });
      }
      for (const ref of refs) expect(await harness.running(ref)).toBe(0);
      await harness.restoreNode!(gone);
      await until(
        executor,
        [job],
        async () => (await started(refs[0]!)) && (await started(refs[1]!)),
        'both replicas made once the node is back',
      );
    },
  );

  it('starts a new generation only after the old replicas are gone', async () => {
    const executor = await create(1);
    const old = { jobId: 6, generation: 1, rank: 0 };
    const next = { jobId: 6, generation: 2, rank: 0 };
    await until(
      executor,
      [desiredJob(harness, 6, 1, [1], harness.workload({ ignoreTerm: true }))],
      () => started(old),
      'gen 1',
    );
    const gen2 = desiredJob(harness, 6, 2, [1, 1], harness.workload());
    const statuses = await executor.reconcile([gen2]);
    // Not started: no status, or one that says it is still to start (and why, Kubernetes').
    expect(find(statuses, next)?.phase ?? 'starting').toBe('starting');
    expect(await harness.starts(next)).toHaveLength(0);
    await until(executor, [gen2], () => started(next), 'gen 2 after gen 1 was killed');
    expect(await harness.running(old)).toBe(0);
    expect(await harness.terminations(old)).toBe(1);
  });
}
