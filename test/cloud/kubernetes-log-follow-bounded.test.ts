/**
 * Following a long pod log from its start (`cursor=start`) or from a place far into it holds a piece of
 * it at a time, not the whole log (the kubelet's file is up to 10 MiB): until 2026-12-02 the follow's
 * start was found in one read of the log from its beginning, held whole as a string. Measured as the
 * largest single read boa gets from the API server, against the real client and the fake API server.
 */
import type { Writable } from 'node:stream';
import { CoreV1Api, Log } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ReplicaLogFollow } from '../../src/service/ports.ts';
import { fakeKubeCluster, runningJob } from './kube-executor-fixture.ts';

const NS = 'boa-jobs';
const cluster = fakeKubeCluster(NS);
const MiB = 1 << 20;

/**
 * Every read boa makes of a pod log, by its size: a log read whole (readNamespacedPodLog) as one, a
 * streamed one (Log.log, which pipes the response into boa's stream) by each chunk it is given; and the
 * bytes each request gave, with whether it was followed.
 */
function recordReads() {
  const reads: number[] = [];
  const requests: { follow: boolean; bytes: number }[] = [];
  const readWhole = CoreV1Api.prototype.readNamespacedPodLog;
  vi.spyOn(CoreV1Api.prototype, 'readNamespacedPodLog').mockImplementation(async function (
    this: CoreV1Api,
    ...args: Parameters<CoreV1Api['readNamespacedPodLog']>
  ) {
    const text = await readWhole.apply(this, args);
    reads.push(Buffer.byteLength(text));
    requests.push({ follow: false, bytes: Buffer.byteLength(text) });
    return text;
  });
  const stream = Log.prototype.log;
  vi.spyOn(Log.prototype, 'log').mockImplementation(function (this: Log, ...args: any[]) {
    const into = args[3] as Writable;
    const record = { follow: Boolean(args[4]?.follow), bytes: 0 };
    requests.push(record);
    const write = into.write.bind(into) as (...a: any[]) => boolean;
    into.write = ((chunk: Buffer, ...rest: any[]) => {
      reads.push(chunk.length);
      record.bytes += chunk.length;
      return write(chunk, ...rest);
    }) as Writable['write'];
    return (stream as (...a: any[]) => Promise<AbortController>).apply(this, args);
  });
  return { largest: () => Math.max(0, ...reads), requests };
}

afterEach(() => vi.restoreAllMocks());

async function readAll(follow: ReplicaLogFollow): Promise<string> {
  const chunks: string[] = [];
  for await (const chunk of follow.chunks) chunks.push(typeof chunk === 'string' ? chunk : chunk.toString());
  return chunks.join('');
}

describe('the Kubernetes executor following a long log', () => {
  it('from its start and from far into it, reads it a piece at a time: nothing lost or repeated', async () => {
    const { executor, pod } = await runningJob(cluster);
    // 10 MiB, as much as the kubelet keeps in its newest file, in four seconds of a quarter each: a
    // follower's place is found among a second's many lines, not by sinceTime alone.
    const line = (i: number) => `line ${String(i).padStart(6, '0')} ${'x'.repeat(115)}\n`;
    const lines = Array.from({ length: (10 * MiB) / 128 }, (_, i) => line(i));
    const log = lines.join('');
    expect(log.length).toBe(10 * MiB);
    for (let part = 0; part < 4; part++) {
      await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000)));
      cluster.fake.kubelet.writeLog(
        pod,
        lines.slice((part * lines.length) / 4, ((part + 1) * lines.length) / 4).join(''),
      );
    }
    cluster.fake.kubelet.exit(pod, 0);
    const reads = recordReads();

    const fromStart = (await executor.followLog!(
      { jobId: 7, rank: 0, tailLines: 10, from: { cursor: 'start', skip: 0 } },
      new AbortController().signal,
    ))!;
    // Its place is the first line: the log is read no further than that to find it, not whole.
    const placing = reads.requests.filter((r) => !r.follow);
    expect(placing.reduce((sum, r) => sum + r.bytes, 0)).toBeLessThan(MiB);
    expect(reads.largest()).toBeLessThan(MiB);
    expect(fromStart.from.skip).toBe(0);
    expect(await readAll(fromStart)).toBe(log);

    // A follower cut off 7 MiB and a half line in goes on from there.
    const skip = 7 * MiB + 50;
    const again = (await executor.followLog!(
      { jobId: 7, rank: 0, generation: 1, tailLines: 10, from: { cursor: 'start', skip } },
      new AbortController().signal,
    ))!;
    expect(again.gap).toBeUndefined();
    // Answered from the line it got to: the same place, read from that line's second.
    expect(again.from.skip).toBe(50);
    expect(await readAll(again)).toBe(log.slice(skip));
    // And that place's cursor, given again, reads from there.
    const placed = (await executor.followLog!(
      { jobId: 7, rank: 0, generation: 1, tailLines: 10, from: { cursor: again.from.cursor, skip: 60 } },
      new AbortController().signal,
    ))!;
    expect(await readAll(placed)).toBe(log.slice(skip + 10));

    // More bytes than the log holds: a gap at its end, found without holding the log either.
    const past = (await executor.followLog!(
      { jobId: 7, rank: 0, generation: 1, tailLines: 10, from: { cursor: 'start', skip: log.length + 1 } },
      new AbortController().signal,
    ))!;
    expect(past.gap).toBe(true);
    expect(await readAll(past)).toBe('');

    // Its last lines, when the second they start in holds most of the log: placed in a streamed read.
    const tail = (await executor.followLog!(
      { jobId: 7, rank: 0, tailLines: 10 },
      new AbortController().signal,
    ))!;
    expect(await readAll(tail)).toBe(lines.slice(-10).join(''));
    const again10 = (await executor.followLog!(
      { jobId: 7, rank: 0, generation: 1, tailLines: 10, from: { ...tail.from, skip: 128 } },
      new AbortController().signal,
    ))!;
    expect(await readAll(again10)).toBe(lines.slice(-9).join(''));

    // No read of the log, whole or streamed, came as more than a MiB at once (it was 10 MiB whole).
    expect(reads.largest()).toBeLessThan(MiB);
  }, 120_000);
});
