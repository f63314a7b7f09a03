/**
 * Following a replica's pod log through the Kubernetes executor (src/cloud/kubernetes/log-follow.ts),
 * with the real client against the fake API server: lines as they are written, a broken stream picked
 * up again without a line lost or repeated, the end with the container, and a refusal said at once.
 */
import { describe, expect, it } from 'vitest';
import { podName } from '../../src/cloud/kubernetes/names.ts';
import type { DesiredJob, ReplicaLogFollow } from '../../src/service/ports.ts';
import { fakeKubeCluster, jobOnNodes, runningJob } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const cluster = fakeKubeCluster(NS);

/** Reads the followed chunks in the background: what came so far, and the end. */
function reader(follow: ReplicaLogFollow) {
  let seen = '';
  const done = (async () => {
    for await (const chunk of follow.chunks) seen += chunk;
  })();
  const until = async (ok: (seen: string) => boolean) => {
    for (let i = 0; i < 400 && !ok(seen); i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toSatisfy(ok);
  };
  return { seen: () => seen, done, until };
}

describe('the Kubernetes executor following a log', () => {
  it('gives the last lines, then new ones, picks a broken stream up where it was, and ends with the container', async () => {
    const { executor, pod } = await runningJob(cluster);
    cluster.fake.kubelet.writeLog(pod, 'one\ntwo\nthree\n');
    const follow = await executor.followLog!(
      { jobId: 7, rank: 0, tailLines: 2 },
      new AbortController().signal,
    );
    expect(follow?.generation).toBe(1);
    const read = reader(follow!);
    await read.until((s) => s === 'two\nthree\n');
    cluster.fake.kubelet.writeLog(pod, 'four\n');
    await read.until((s) => s.endsWith('four\n'));
    // A proxy drops the connection; lines written meanwhile come once it is opened again, none twice.
    cluster.fake.cutLogStreams();
    cluster.fake.kubelet.writeLog(pod, 'five\nsix\n');
    await read.until((s) => s.endsWith('six\n'));
    cluster.fake.kubelet.writeLog(pod, 'last words\n');
    cluster.fake.kubelet.exit(pod, 0);
    await read.done;
    expect(read.seen()).toBe('two\nthree\nfour\nfive\nsix\nlast words\n');
    // Reopened from the last line's second, not from the tail again.
    const reads = cluster.fake.requests.filter((r) => r.path.endsWith(`/pods/${pod}/log`));
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect(reads.at(-1)?.query.get('sinceTime')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  }, 30_000);

  it('loses and repeats nothing across a break when the node stamps in its own zone and to the second; a \\r stays within its line', async () => {
    const { executor, pod } = await runningJob(cluster);
    cluster.fake.logs.utcOffsetMinutes = 120;
    cluster.fake.logs.coarse = true;
    cluster.fake.kubelet.writeLog(pod, 'a\nb\nprogress 10%\rprogress 20%\n');
    const follow = await executor.followLog!(
      { jobId: 7, rank: 0, tailLines: 10 },
      new AbortController().signal,
    );
    const read = reader(follow!);
    await read.until((s) => s.endsWith('20%\n'));
    cluster.fake.cutLogStreams();
    cluster.fake.kubelet.writeLog(pod, 'b\nc\n'); // the same text again, in the same second
    await read.until((s) => s.endsWith('c\n'));
    cluster.fake.kubelet.exit(pod, 0);
    await read.done;
    expect(read.seen()).toBe('a\nb\nprogress 10%\rprogress 20%\nb\nc\n');
  }, 30_000);

  it('gives a line a break cut in whole, once; and the lines written between a break and the end', async () => {
    const { executor, pod } = await runningJob(cluster);
    cluster.fake.kubelet.writeLog(pod, 'one\n');
    const follow = await executor.followLog!(
      { jobId: 7, rank: 0, tailLines: 5 },
      new AbortController().signal,
    );
    const read = reader(follow!);
    await read.until((s) => s === 'one\n');
    // The connection drops three characters into a line: that line comes again whole, not cut short.
    cluster.fake.logs.cutInNextLine = true;
    cluster.fake.kubelet.writeLog(pod, 'two words\n');
    await read.until((s) => s === 'one\ntwo words\n');
    // It breaks off again, and the container writes its last line and ends before boa asks again.
    cluster.fake.cutLogStreams();
    cluster.fake.kubelet.writeLog(pod, 'three\nno newline at the end');
    cluster.fake.kubelet.exit(pod, 0);
    await read.done;
    expect(read.seen()).toBe('one\ntwo words\nthree\nno newline at the end\n');
  }, 30_000);

  it.each([
    ['a second and the lines of it before', 1, 'b\n'],
    ["the log's start", 5, 'a\nb\n'],
  ])(
    'says a gap when the place a follower got to (from %s) was rotated away, and goes on from the newest line',
    async (_, tailLines, had) => {
      const { executor, pod } = await runningJob(cluster);
      cluster.fake.kubelet.writeLog(pod, 'a\nb\n');
      const first = new AbortController();
      const follow = (await executor.followLog!({ jobId: 7, rank: 0, tailLines }, first.signal))!;
      expect(follow.from.cursor === 'start').toBe(tailLines === 5);
      const read = reader(follow);
      await read.until((s) => s === had);
      first.abort();
      await read.done;
      // While boa was away the job wrote on, and the kubelet rotated its log.
      cluster.fake.kubelet.writeLog(pod, 'c\n');
      await new Promise((r) => setTimeout(r, 1100));
      cluster.fake.kubelet.rotateLog(pod);
      cluster.fake.kubelet.writeLog(pod, 'd\n');
      const again = (await executor.followLog!(
        {
          jobId: 7,
          rank: 0,
          generation: 1,
          tailLines,
          from: { cursor: follow.from.cursor, skip: had.length },
        },
        new AbortController().signal,
      ))!;
      expect(again.gap).toBe(true);
      const rest = reader(again);
      cluster.fake.kubelet.writeLog(pod, 'e\n');
      await rest.until((s) => s.endsWith('e\n'));
      cluster.fake.kubelet.exit(pod, 0);
      await rest.done;
      // What came after it asked; d, written before, is among the lines said missing. Not nothing at all,
      // as when the bytes it had were skipped in what the log holds now.
      expect(rest.seen()).toBe('e\n');
    },
    30_000,
  );

  it.each([
    ['to the nanosecond', false],
    ['to the second, in its own zone', true],
  ])(
    'goes on from the position a follower was given plus the bytes it got, nothing lost or repeated: a clock %s',
    async (_, coarse) => {
      const { executor, pod } = await runningJob(cluster);
      cluster.fake.logs.coarse = coarse;
      cluster.fake.logs.utcOffsetMinutes = coarse ? -330 : 0;
      // Many lines within one second: the tail starts inside it.
      cluster.fake.kubelet.writeLog(pod, 'a\nb\nc\nd\ne\n');
      const first = new AbortController();
      const follow = (await executor.followLog!({ jobId: 7, rank: 0, tailLines: 3 }, first.signal))!;
      // The second of its first line, and the lines of that second before it.
      expect(follow.from.cursor).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\/2$/);
      expect(follow.from.skip).toBe(0);
      const read = reader(follow);
      await read.until((s) => s === 'c\nd\ne\n');
      // boa restarts: the follower had 3 bytes, written meanwhile is more.
      first.abort();
      await read.done;
      cluster.fake.kubelet.writeLog(pod, 'f\n');
      const again = (await executor.followLog!(
        { jobId: 7, rank: 0, generation: 1, tailLines: 3, from: { cursor: follow.from.cursor, skip: 3 } },
        new AbortController().signal,
      ))!;
      // Answered from the line it got to (d, the fourth of that second), not from where it began.
      expect(again.from).toEqual({ cursor: follow.from.cursor.replace(/\/2$/, '/3'), skip: 1 });
      const rest = reader(again);
      await rest.until((s) => s.endsWith('f\n'));
      cluster.fake.kubelet.writeLog(pod, 'g\n');
      cluster.fake.kubelet.exit(pod, 0);
      await rest.done;
      expect(rest.seen()).toBe('\ne\nf\ng\n');
      // From its beginning, past the bytes given.
      const start = (await executor.followLog!(
        { jobId: 7, rank: 0, generation: 1, tailLines: 3, from: { cursor: 'start', skip: 4 } },
        new AbortController().signal,
      ))!;
      const whole = reader(start);
      await whole.done;
      expect(whole.seen()).toBe('c\nd\ne\nf\ng\n');
    },
    30_000,
  );

  it('starts a log with fewer lines than asked at its beginning; refuses a cursor it did not give', async () => {
    const { executor, pod } = await runningJob(cluster);
    cluster.fake.kubelet.writeLog(pod, 'only\n');
    const stop = new AbortController();
    const follow = (await executor.followLog!({ jobId: 7, rank: 0, tailLines: 3 }, stop.signal))!;
    expect(follow.from).toEqual({ cursor: 'start', skip: 0 });
    stop.abort();
    for (const cursor of ['12', '2026-11-30T11:08:23.5Z/1', '2026-13-40T11:08:23Z/1', 'start/1'])
      await expect(
        executor.followLog!({ jobId: 7, rank: 0, tailLines: 3, from: { cursor, skip: 0 } }, stop.signal),
      ).rejects.toThrow(/is not a place in this executor's logs: a pod log's cursor is "start" or a second/);
  });

  it('follows a pod its node turned away into the pod made again for it, the same generation', async () => {
    const executor = cluster.executor();
    const node = cluster.nodes[0]!;
    const reconcileUntil = async (desired: DesiredJob[], jobId: number, ok: (phase?: string) => boolean) => {
      for (let i = 0; i < 200; i++) {
        const status = (await executor.reconcile(desired)).find((s) => s.jobId === jobId);
        if (ok(status?.phase)) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`job ${jobId} never got there`);
    };
    // Job 1 holds the node's 4 GPUs; job 2 is placed there as job 1's pod stops: turned away.
    const holder = jobOnNodes(1, 1, [node], { gpus: 4, env: () => ({}) });
    await reconcileUntil([holder], 1, (phase) => phase === 'running');
    const next = [jobOnNodes(2, 1, [node], { gpus: 4, env: () => ({}) })];
    await reconcileUntil(next, 2, () =>
      cluster.fake.pods(NS).some((p) => p.metadata.name === podName(2, 1, 0)),
    );
    const turned = () => cluster.fake.pods(NS).find((p) => p.metadata.name === podName(2, 1, 0));
    for (let i = 0; i < 200 && turned()?.status?.phase !== 'Failed'; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(turned()?.status?.phase).toBe('Failed');
    const follow = await executor.followLog!(
      { jobId: 2, rank: 0, tailLines: 10 },
      new AbortController().signal,
    );
    const read = reader(follow!);
    // Job 1's pod is gone: job 2's is made again, starts and writes.
    cluster.fake.kubelet.finishTermination(podName(1, 1, 0));
    await reconcileUntil(next, 2, (phase) => phase === 'running');
    cluster.fake.kubelet.writeLog(podName(2, 1, 0), 'made again, running\n');
    await read.until((s) => s === 'made again, running\n');
    cluster.fake.kubelet.exit(podName(2, 1, 0), 0);
    await read.done;
    expect(read.seen()).toBe('made again, running\n');
  }, 30_000);

  it('closes its connection to the API server when the follower goes before reading anything', async () => {
    const { executor, pod } = await runningJob(cluster);
    cluster.fake.kubelet.writeLog(pod, 'working\n');
    const stop = new AbortController();
    const follow = await executor.followLog!({ jobId: 7, rank: 0, tailLines: 10 }, stop.signal);
    expect(follow).toBeDefined();
    expect(cluster.fake.openLogStreams()).toBe(1);
    stop.abort();
    for (let i = 0; i < 200 && cluster.fake.openLogStreams() > 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(cluster.fake.openLogStreams()).toBe(0);
  });

  it('ends when the follower goes away, though the replica runs on', async () => {
    const { executor, pod } = await runningJob(cluster);
    cluster.fake.kubelet.writeLog(pod, 'working\n');
    const stop = new AbortController();
    const read = reader((await executor.followLog!({ jobId: 7, rank: 0, tailLines: 10 }, stop.signal))!);
    await read.until((s) => s === 'working\n');
    stop.abort();
    await read.done;
    expect(cluster.fake.pods(NS).find((p) => p.metadata.name === pod)?.status?.phase).toBe('Running');
  });

  it("refuses at once, naming the permission, when boa's role may not read pod logs; none for a pod that is gone", async () => {
    const { executor } = await runningJob(cluster);
    cluster.fake.faults.inject({
      status: 403,
      count: 1,
      match: (r) => r.path.endsWith('/log'),
      message: 'pods "boa-job-7-g1-r0" is forbidden: User "boa" cannot get resource "pods/log"',
    });
    const signal = new AbortController().signal;
    await expect(executor.followLog!({ jobId: 7, rank: 0, tailLines: 10 }, signal)).rejects.toThrow(
      /needs get on pods\/log/,
    );
    expect(
      await executor.followLog!({ jobId: 7, rank: 0, generation: 5, tailLines: 10 }, signal),
    ).toBeUndefined();
  });
});
