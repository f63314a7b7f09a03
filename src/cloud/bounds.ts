/** Clamping a requested node count to a node group's bounds; shared by the local and AWS pools. */

export interface SizeBounds {
  readonly minSize: number;
  readonly maxSize: number;
}

export interface Clamped {
  /** The count to request: within [minSize, min(maxSize, hardCap)]. */
  readonly requested: number;
  /** Why it differs from the target, if it does. */
  readonly clampedBy?: 'minSize' | 'maxSize' | 'hardCap';
}

/** Refuses what no node group can take: not a whole number (NaN, Infinity, 2.5). */
export function checkTarget(target: number): void {
  if (!Number.isInteger(target)) {
    throw new RangeError(`desired node count must be a whole number, got ${target}`);
  }
}

/**
 * The hard cap (the operator's maxNodes) lowers the group's maximum but never below its minimum: the
 * cloud would refuse a desired size under minSize, and the minimum belongs to the deployment.
 */
export function clampToBounds(target: number, bounds: SizeBounds, hardCap?: number): Clamped {
  checkTarget(target);
  const capped = hardCap !== undefined && hardCap < bounds.maxSize;
  const upper = Math.max(bounds.minSize, capped ? hardCap : bounds.maxSize);
  if (target < bounds.minSize) return { requested: bounds.minSize, clampedBy: 'minSize' };
  if (target > upper) return { requested: upper, clampedBy: capped ? 'hardCap' : 'maxSize' };
  return { requested: target };
}
