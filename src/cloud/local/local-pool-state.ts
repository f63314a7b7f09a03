import { z } from 'zod';

/** Config and persisted state of the emulated node group, validated with errors that name the field. */

const count = z.number().int('must be a whole number').nonnegative('must be >= 0');
const seconds = z.number().finite('must be a finite number').nonnegative('must be >= 0');

export const localPoolConfigSchema = z
  .strictObject({
    minSize: count.default(0),
    maxSize: count,
    bootSeconds: seconds,
    releaseSeconds: seconds,
    gpusPerNode: count.positive('must be > 0'),
  })
  .refine((c) => c.minSize <= c.maxSize, { message: 'minSize must be <= maxSize', path: ['minSize'] });

export type LocalPoolConfig = z.input<typeof localPoolConfigSchema>;
export type ResolvedLocalPoolConfig = z.output<typeof localPoolConfigSchema>;

const localNodeSchema = z.strictObject({
  id: z.string().min(1, 'must not be empty'),
  /** When it was launched, ms since the epoch (the virtual or real clock's). */
  launchedAt: z.number().finite(),
  /** When the pool started releasing it (it was beyond the desired count); gone releaseSeconds later. */
  releasedAt: z.number().finite().optional(),
  /** Cordoned by the service before it removes the node: no new work lands there. */
  cordoned: z.boolean().optional(),
  /** Protected from scale-in: lowering the desired size releases other nodes (as an ASG does). */
  protectedFromScaleIn: z.boolean().optional(),
});

export type LocalNode = z.output<typeof localNodeSchema>;

/**
 * What the service persists to survive a crash: the desired size, every node that still exists (with
 * launch and release times, so readiness and disappearance are re-derived from the clock), and the next
 * node number, so ids are never reused. Bounds and timings are config, not state.
 */
export const localPoolSnapshotSchema = z
  .strictObject({
    version: z.literal(1),
    desiredSize: count,
    nextNodeNumber: count.positive('must be > 0'),
    nodes: z.array(localNodeSchema),
  })
  .refine((s) => new Set(s.nodes.map((n) => n.id)).size === s.nodes.length, {
    message: 'node ids must be unique',
    path: ['nodes'],
  });

export type LocalPoolSnapshot = z.output<typeof localPoolSnapshotSchema>;

export class LocalPoolError extends Error {
  override name = 'LocalPoolError';
}

export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new LocalPoolError(`invalid ${what}: ${issues.join('; ')}`);
}
