import type { PoolNode } from '../../src/service/ports.ts';

/** A ready 4-GPU node launched at 0, with what a test sets on it (leaving, not ready, cordoned, ...). */
export const poolNode = (id: string, extra: Partial<PoolNode> = {}): PoolNode => ({
  id,
  launchedAt: 0,
  gpus: 4,
  ready: true,
  ...extra,
});
