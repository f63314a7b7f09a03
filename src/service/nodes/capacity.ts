import type { NodeGroupState } from '../ports.ts';

export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

export interface CapacityView {
  /** Backing off: boa asks for no more nodes than are launched until then. */
  readonly backoffUntil: number | null;
  /** Launch failures in a row (each one doubles the wait, up to the cap). */
  readonly failures: number;
  /** The cloud's own words (e.g. EC2's InsufficientInstanceCapacity message). */
  readonly reason: string | null;
}

/**
 * Capacity failures (instances the node group could not launch: InsufficientInstanceCapacity and the
 * like) seen in the group's failed scaling activities. Each new failure doubles the wait before boa asks
 * again (exponential, capped); while waiting, boa asks only for the nodes that exist, so the group does
 * not launch a burst of nodes later that nobody accounted for. A size reached without a new failure
 * resets it.
 */
export class CapacityBackoff {
  private failures = 0;
  private until = Number.NEGATIVE_INFINITY;
  private reason: string | null = null;
  private lastFailureAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly policy: BackoffPolicy) {}

  /**
   * Takes in what the cloud reports and how many nodes boa wants; true when a new failure started (or
   * lengthened) a backoff. Only reaching the wanted count (not the lowered size asked during a backoff)
   * clears the failures.
   */
  observe(group: NodeGroupState, liveNodes: number, wanted: number, now: number): boolean {
    const newest = (group.launchFailures ?? []).reduce<{ at: number; message: string } | undefined>(
      (a, f) => (a === undefined || f.at > a.at ? f : a),
      undefined,
    );
    if (newest && newest.at > this.lastFailureAt) {
      this.lastFailureAt = newest.at;
      if (now >= this.until) {
        this.failures += 1;
        const wait = Math.min(this.policy.maxMs, this.policy.baseMs * 2 ** (this.failures - 1));
        this.until = now + wait;
      }
      this.reason = newest.message;
      return true;
    }
    if (now >= this.until && this.failures > 0 && liveNodes >= wanted) {
      this.failures = 0;
      this.reason = null;
    }
    return false;
  }

  active(now: number): boolean {
    return now < this.until;
  }

  view(now: number): CapacityView {
    return {
      backoffUntil: this.active(now) ? this.until : null,
      failures: this.failures,
      reason: this.reason,
    };
  }
}
