/**
 * The unlisted count's GPUs per node (unlisted-paid.ts): the group's as last described, kept in the
 * stored snapshot for a restart in the outage, the configured ones only when no type is known.
 */
import { describe, expect, it } from 'vitest';
import type { PoolNode } from '../../src/service/ports.ts';
import { UnlistedPaid } from '../../src/service/unlisted-paid.ts';
import { parseUnlistedPaid } from '../../src/service/unlisted-paid-snapshot.ts';

const MINUTE = 60_000;
const node = (id: string, gpus: number): PoolNode => ({ id, gpus, launchedAt: 0, ready: true });

describe('the GPUs per node the unlisted nodes count at', () => {
  it("counts at the group's GPUs, kept across a restart, not the configured", () => {
    const before = new UnlistedPaid();
    // One 4-GPU node listed, the group at 2 (a launch pending), its type 4-GPU; boa configured with 1.
    before.listed(0, [node('i-1', 4)], 2, 4);
    before.failed(MINUTE, 2, undefined, 1);
    const after = new UnlistedPaid();
    after.restore(parseUnlistedPaid(JSON.parse(JSON.stringify(before.snapshot()))));
    after.failed(2 * MINUTE, 2, undefined, 1);
    // 2 x 4 - 4 = 4 GPUs for each minute; at the configured 1 GPU: 2 x 1 - 4, nothing.
    expect(after.gpuMs(0, 2 * MINUTE)).toBe(4 * 2 * MINUTE);
    expect(after.nodeGpus).toBe(4);
  });

  it('a snapshot stored before nodeGpus was kept counts at the configured GPUs', () => {
    const stored = parseUnlistedPaid({ spans: [], lastAt: 0, shown: 4, storedAt: 0, desiredNodes: 3 });
    const paid = new UnlistedPaid();
    paid.restore(stored);
    paid.failed(MINUTE, 3, undefined, 4);
    expect(paid.nodeGpus).toBeUndefined();
    expect(paid.gpuMs(0, MINUTE)).toBe((3 * 4 - 4) * MINUTE);
  });

  it.each([0, 1.5, -4])('a stored nodeGpus of %s is refused, naming it and what is allowed', (nodeGpus) => {
    expect(() => parseUnlistedPaid({ spans: [], shown: 0, desiredNodes: 0, nodeGpus })).toThrow(
      /"unlistedPaid" is not valid: nodeGpus: must be (a whole number|> 0)/,
    );
  });
});
