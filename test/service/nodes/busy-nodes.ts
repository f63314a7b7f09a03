import { expect } from 'vitest';
import { type NodesWorld, nodesWorld } from '../nodes-harness.ts';

/** An AWS client error as the SDK throws it (`name` is its code). */
export function awsError(name: string, message: string, httpStatusCode = 400): Error {
  return Object.assign(new Error(message), { name, $fault: 'client', $metadata: { httpStatusCode } });
}

/**
 * A node group of `count` nodes, each busy with one 4-GPU job (of the jobs returned, in order); the
 * world goes into `worlds` for the test's cleanup.
 */
export async function busyNodes(worlds: NodesWorld[], count: number) {
  const w = nodesWorld();
  worlds.push(w);
  const started = await w.start();
  const jobs = Array.from({ length: count }, () => started.job(4));
  await started.tick(3);
  expect(w.group.group.desiredSize).toBe(count);
  return { w, ...started, jobs };
}
