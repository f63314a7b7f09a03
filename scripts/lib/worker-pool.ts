/**
 * A small pool of worker threads running the same module: tasks go to whichever worker is free, and the
 * results come back in task order. `module` must be JavaScript that registers tsx before loading the
 * TypeScript worker (see compare-worker-entry.mjs).
 */
import { Worker } from 'node:worker_threads';

export interface PoolReply<R> {
  readonly index: number;
  readonly result?: R;
  readonly error?: { readonly name: string; readonly message: string };
}

export async function runPool<T, R>(
  module: URL,
  workerData: unknown,
  tasks: readonly T[],
  size: number,
  onReply: (reply: PoolReply<R>, done: number) => void = () => {},
): Promise<Array<PoolReply<R>>> {
  const replies: Array<PoolReply<R>> = new Array(tasks.length);
  let next = 0;
  let done = 0;
  const workers = Array.from(
    { length: Math.max(1, Math.min(size, tasks.length)) },
    () => new Worker(module, { workerData }),
  );
  try {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolveWorker, rejectWorker) => {
            const feed = () => {
              if (next >= tasks.length) {
                resolveWorker();
                return;
              }
              const index = next++;
              worker.postMessage({ index, task: tasks[index] });
            };
            worker.on('message', (reply: PoolReply<R>) => {
              replies[reply.index] = reply;
              onReply(reply, ++done);
              feed();
            });
            worker.on('error', rejectWorker);
            worker.on('exit', (code) => {
              if (next < tasks.length || code !== 0)
                rejectWorker(new Error(`a worker exited with code ${code}`));
            });
            feed();
          }),
      ),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return replies;
}
