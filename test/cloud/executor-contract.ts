/**
 * The Executor port's contract (src/service/ports.ts), run against every adapter through a harness:
 * local processes (local-executor.contract.test.ts) and Kubernetes pods over the fake API server.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LogCursorError,
  type DesiredJob,
  type Executor,
  type ReplicaStatus,
  type Workload,
} from '../../src/service/ports.ts';

export interface ReplicaRef {
  readonly jobId: number;
  readonly generation: number;
  readonly rank: number;
}

/** What the contract needs from an adapter's test set-up. */
export interface ExecutorHarness {
  /** Node names a replica may be placed on (at least two). */
  readonly nodes: readonly string[];
  /** A new executor instance over the same world (a second call is a restarted service). */
  create(options: { terminationGraceSeconds: number }): Promise<Executor>;
  /**
   * A workload that runs until told to exit; with ignoreTerm it ignores SIGTERM (only a kill ends it);
   * with termExitsZero a SIGTERM makes it exit 0, as a job that checkpoints on SIGTERM does.
   */
  workload(options?: { ignoreTerm?: boolean; termExitsZero?: boolean }): Workload;
  /** Makes the replica's program write `text` to its output (its log). */
  say(ref: ReplicaRef, text: string): Promise<void>;
  /** Makes the replica's program exit with this code. */
  exit(ref: ReplicaRef, code: number): Promise<void>;
  /** Kills the replica from outside (kill -9 of its process group; pod deletion), leaving no exit. */
  kill(ref: ReplicaRef): Promise<void>;
  /**
   * Stops the replica from outside with a SIGTERM the executor did not send (a machine shutting down;
   * a pod deleted by someone else), letting its program exit as it handles SIGTERM.
   */
  interrupt(ref: ReplicaRef): Promise<void>;
  /** The environment the replica was started with, once per start. */
  starts(ref: ReplicaRef): Promise<ReadonlyArray<Readonly<Record<string, string>>>>;
  /** SIGTERMs (graceful deletions) the replica received. */
  terminations(ref: ReplicaRef): Promise<number>;
  /** Processes or pods of the replica that exist now, whatever the executor believes. */
  running(ref: ReplicaRef): Promise<number>;
  /**
   * With ContractOptions.nodesGo: the node goes without boa (the cluster no longer lists it), and comes
   * back under the same name.
   */
  removeNode?(node: string): Promise<void>;
  restoreNode?(node: string): Promise<void>;
  cleanup(): Promise<void>;
}

export interface ContractOptions {
  /** How long a replica may take to start or stop (ms). */
  readonly settleMs?: number;
  /**
   * The adapter's nodes can go without boa (Kubernetes Nodes; not the local executor's, which are
   * slices of this machine): the harness has removeNode and restoreNode.
   */
  readonly nodesGo?: boolean;
}

/** A desired job whose replicas are spread over the harness's nodes, with the env the service gives. */
export function desiredJob(
  harness: ExecutorHarness,
  jobId: number,
  generation: number,
  gpusPerNode: readonly number[],
  workload: Workload,
): DesiredJob {
  const width = gpusPerNode.reduce((a, b) => a + b, 0);
  return {
    jobId,
    generation,
    replicas: gpusPerNode.map((gpus, rank) => ({
      jobId,
      generation,
      rank,
      node: harness.nodes[rank % harness.nodes.length] as string,
      gpus,
      workload,
      env: {
        BOA_JOB_ID: String(jobId),
        BOA_GENERATION: String(generation),
        WORLD_SIZE: String(width),
        NNODES: String(gpusPerNode.length),
        NODE_RANK: String(rank),
        NPROC_PER_NODE: String(gpus),
      },
    })),
  };
}

const find = (statuses: readonly ReplicaStatus[], ref: ReplicaRef) =>
  statuses.find((s) => s.jobId === ref.jobId && s.generation === ref.generation && s.rank === ref.rank);

export function executorContract(
  name: string,
  makeHarness: () => Promise<ExecutorHarness>,
  options: ContractOptions = {},
) {
  // Each wait returns as soon as its state is reached: 20 s, as a loaded machine starts processes (the
  // local executor's launcher, its replicas' shells) slowly.
  const settleMs = options.settleMs ?? 20_000;
  describe(`Executor contract: ${name}`, () => {
    let harness: ExecutorHarness;
    const executors: Executor[] = [];
    beforeEach(async () => {
      harness = await makeHarness();
    });
    afterEach(async () => {
      for (const executor of executors.splice(0)) await executor.close();
      await harness.cleanup();
    });
    const create = async (terminationGraceSeconds = 30) => {
      const executor = await harness.create({ terminationGraceSeconds });
      executors.push(executor);
      return executor;
    };

    /** Reconciles until `done` holds for the statuses (level-triggered: repeating is always safe). */
    async function until(
      executor: Executor,
      desired: readonly DesiredJob[],
      done: (statuses: readonly ReplicaStatus[]) => boolean | Promise<boolean>,
      what: string,
    ): Promise<readonly ReplicaStatus[]> {
      const deadline = Date.now() + settleMs;
      for (;;) {
        const statuses = await executor.reconcile(desired);
        if (await done(statuses)) return statuses;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}: ${JSON.stringify(statuses)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const started = async (ref: ReplicaRef) => (await harness.starts(ref)).length > 0;

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

    it("reads a replica's log: its last lines, of the newest generation unless one is named; none for a job that never ran", async () => {
      const executor = await create();
      expect(executor.logs).toBeDefined();
      const logs = (query: { generation?: number; tailLines: number }) =>
        executor.logs!({ jobId: 11, rank: 0, ...query });
      const eventually = async (query: { generation?: number; tailLines: number }, text: string) => {
        const deadline = Date.now() + settleMs;
        for (;;) {
          const log = await logs(query);
          if (log?.text.endsWith(text) || Date.now() > deadline) return log;
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const first = { jobId: 11, generation: 1, rank: 0 };
      await until(
        executor,
        [desiredJob(harness, 11, 1, [1], harness.workload())],
        () => started(first),
        'start',
      );
      await harness.say(first, 'epoch 1\nepoch 2\nepoch 3\n');
      expect(await eventually({ tailLines: 2 }, 'epoch 3\n')).toEqual({
        generation: 1,
        text: 'epoch 2\nepoch 3\n',
      });

      const second = { ...first, generation: 2 };
      await until(
        executor,
        [desiredJob(harness, 11, 2, [1], harness.workload())],
        () => started(second),
        'generation 2',
      );
      await harness.say(second, 'resumed at epoch 3\n');
      expect(await eventually({ tailLines: 100 }, 'resumed at epoch 3\n')).toEqual({
        generation: 2,
        text: 'resumed at epoch 3\n',
      });
      expect(await executor.logs!({ jobId: 12, rank: 0, tailLines: 100 })).toBeUndefined();
      expect(await executor.logs!({ jobId: 11, rank: 0, generation: 7, tailLines: 100 })).toBeUndefined();
    });

    it("follows a replica's log: its last lines, then what it writes, until it exits; or until the follower goes", async () => {
      const executor = await create();
      expect(executor.followLog).toBeDefined();
      const ref = { jobId: 13, generation: 1, rank: 0 };
      const desired = [desiredJob(harness, 13, 1, [1], harness.workload())];
      await until(executor, desired, () => started(ref), 'start');
      await harness.say(ref, 'epoch 1\nepoch 2\n');
      // Its log exists once it started writing (a pod's once it runs).
      const deadline = Date.now() + settleMs;
      while (!(await executor.logs!({ jobId: 13, rank: 0, tailLines: 5 }))?.text.endsWith('epoch 2\n')) {
        if (Date.now() > deadline) throw new Error('timed out waiting for its log');
        await executor.reconcile(desired);
        await new Promise((r) => setTimeout(r, 50));
      }
      const read = async (follow: Awaited<ReturnType<NonNullable<Executor['followLog']>>>) => {
        let seen = '';
        const done = (async () => {
          for await (const chunk of follow!.chunks) seen += chunk;
        })();
        const until = async (text: string) => {
          const end = Date.now() + settleMs;
          while (!seen.endsWith(text) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
          expect(seen).toMatch(new RegExp(`${text}$`));
        };
        return { done, until, seen: () => seen };
      };
      const follower = new AbortController();
      const first = await read(
        await executor.followLog!({ jobId: 13, rank: 0, tailLines: 1 }, follower.signal),
      );
      const second = await read(
        await executor.followLog!({ ...ref, tailLines: 10 }, new AbortController().signal),
      );
      await first.until('epoch 2\n');
      await harness.say(ref, 'epoch 3\n');
      await first.until('epoch 3\n');
      follower.abort();
      await first.done;
      await harness.say(ref, 'epoch 4, the last\n');
      await harness.exit(ref, 0);
      await second.done;
      expect(first.seen()).toBe('epoch 2\nepoch 3\n');
      expect(second.seen()).toBe('epoch 1\nepoch 2\nepoch 3\nepoch 4, the last\n');
      expect(
        await executor.followLog!({ jobId: 14, rank: 0, tailLines: 5 }, follower.signal),
      ).toBeUndefined();
    });

    it('goes on with a followed log from where a follower cut off got to, after a restart too: nothing lost or twice', async () => {
      const executor = await create();
      const ref = { jobId: 15, generation: 1, rank: 0 };
      const desired = [desiredJob(harness, 15, 1, [1], harness.workload())];
      await until(executor, desired, () => started(ref), 'start');
      await harness.say(ref, 'epoch 1\nepoch 2\n');
      // The harness says one thing at a time: each is waited for in the log before the next.
      const written = async (on: Executor, text: string) => {
        const deadline = Date.now() + settleMs;
        while (!(await on.logs!({ jobId: 15, rank: 0, tailLines: 5 }))?.text.endsWith(text)) {
          if (Date.now() > deadline)
            throw new Error(`timed out waiting for ${JSON.stringify(text)} in its log`);
          await on.reconcile(desired);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      await written(executor, 'epoch 2\n');
      const readAll = async (follow: Awaited<ReturnType<NonNullable<Executor['followLog']>>>) => {
        let seen = '';
        for await (const chunk of follow!.chunks) seen += chunk;
        return seen;
      };
      const follower = new AbortController();
      const first = (await executor.followLog!({ jobId: 15, rank: 0, tailLines: 1 }, follower.signal))!;
      let seen = '';
      for await (const chunk of first.chunks) {
        seen += chunk;
        if (seen.endsWith('epoch 2\n')) break;
      }
      expect(seen).toBe('epoch 2\n');
      follower.abort();
      // Cut off after "epoch" (5 bytes) came; boa restarts while the replica writes on.
      await harness.say(ref, 'epoch 3\n');
      await written(executor, 'epoch 3\n');
      await executor.close();
      const restarted = await create();
      const from = { cursor: first.from.cursor, skip: first.from.skip + 5 };
      const resumed = await restarted.followLog!(
        { ...ref, tailLines: 1, from },
        new AbortController().signal,
      );
      const whole = await restarted.followLog!(
        { ...ref, tailLines: 1, from: { cursor: 'start', skip: 0 } },
        new AbortController().signal,
      );
      await harness.say(ref, 'epoch 4\n');
      await harness.exit(ref, 0);
      expect(await readAll(resumed)).toBe(' 2\nepoch 3\nepoch 4\n');
      expect(await readAll(whole)).toBe('epoch 1\nepoch 2\nepoch 3\nepoch 4\n');
      await expect(
        restarted.followLog!(
          { ...ref, tailLines: 1, from: { cursor: 'no such place', skip: 0 } },
          follower.signal,
        ),
      ).rejects.toThrow(LogCursorError);
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
  });
}
