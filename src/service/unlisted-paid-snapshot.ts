import { z } from 'zod';

/** The setting that keeps the unlisted GPUs' count across restarts (unlisted-paid.ts). */
export const UNLISTED_PAID_KEY = 'unlistedPaid';

const time = z.number().finite('must be a finite number (ms since the epoch)');
const gpus = z.number().int('must be a whole number').nonnegative('must be >= 0');

/**
 * What UnlistedPaid keeps, stored with each tick's writes: its spans, the last tick it counted to or
 * listed at, the GPUs of the listing the ledger last stored and when, and the group's desired size as
 * last known (after a restart in the outage the group cannot be described either) with its GPUs per
 * node where known.
 */
export const unlistedPaidSnapshotSchema = z.strictObject({
  spans: z.array(z.strictObject({ from: time, to: time, gpus })),
  lastAt: time.optional(),
  shown: gpus,
  storedAt: time.optional(),
  desiredNodes: gpus,
  /** The GPUs of one of the group's nodes as last known (absent in a count stored before it was kept). */
  nodeGpus: z.number().int('must be a whole number').positive('must be > 0').optional(),
});

export type UnlistedPaidSnapshot = z.output<typeof unlistedPaidSnapshotSchema>;

/** The stored snapshot, or a clear error naming what in it is wrong. */
export function parseUnlistedPaid(value: unknown): UnlistedPaidSnapshot {
  const result = unlistedPaidSnapshotSchema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  throw new Error(`the stored setting "${UNLISTED_PAID_KEY}" is not valid: ${issues}`);
}
