/** What the placement tests place: jobs with a width and an allocation, on 4-GPU nodes. */
import type { PoolNode } from '../../src/service/ports.ts';

export interface Job {
  id: number;
  width: number;
  allocation: string[];
}

export const BOUNDS = { gpusPerNode: 4, minNodes: 0, maxNodes: 100 };
export const node = (i: number, ready = true): PoolNode => ({ id: `i-${i}`, launchedAt: 0, gpus: 4, ready });
export const widthOf = (job: Job) => job.width;
