/** The contract's logs: a replica's last lines, followed, and resumed from a cursor after a restart. */
import { expect, it } from 'vitest';
import { LogCursorError, type Executor } from '../../src/service/ports.ts';
import { type ContractContext, desiredJob } from './executor-contract-harness.ts';

export function logCases(ctx: ContractContext): void {
  const { harness, create, until, started, settleMs } = ctx;

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
    expect(await executor.followLog!({ jobId: 14, rank: 0, tailLines: 5 }, follower.signal)).toBeUndefined();
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
    const resumed = await restarted.followLog!({ ...ref, tailLines: 1, from }, new AbortController().signal);
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
}
