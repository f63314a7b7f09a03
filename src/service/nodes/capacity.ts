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

/** What is kept across restarts (settings): JSON, so no infinities (null for none). */
export interface BackoffState {
  readonly failures: number;
  readonly until: number | null;
  readonly reason: string | null;
  readonly lastFailureAt: number | null;
  readonly neverReadySince: number | null;
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
  /**
   * When a node launched last failed to become ready for jobs (a broken bootstrap or AMI), null once a
   * node launched since is ready: until then launches keep failing however many come up.
   */
  private neverReadySince: number | null = null;

  /**
   * `kept`: the state a boa before this one left. In memory only, a restart forgot a backoff under way
   * and launched a wave at once (a broken AMI cost one more wave of nodes per restart), and counted the
   * scaling activities' last failure again as a first one, its wait back at the base.
   */
  constructor(
    private readonly policy: BackoffPolicy,
    kept?: unknown,
  ) {
    const state = backoffState(kept);
    if (!state) return;
    this.failures = state.failures;
    this.until = state.until ?? Number.NEGATIVE_INFINITY;
    this.reason = state.reason;
    this.lastFailureAt = state.lastFailureAt ?? Number.NEGATIVE_INFINITY;
    this.neverReadySince = state.neverReadySince;
  }

  state(): BackoffState {
    const finite = (at: number) => (Number.isFinite(at) ? at : null);
    return {
      failures: this.failures,
      until: finite(this.until),
      reason: this.reason,
      lastFailureAt: finite(this.lastFailureAt),
      neverReadySince: this.neverReadySince,
    };
  }

  /**
   * A node boa never saw ready was removed after the provision timeout: a failure as a launch's (one a
   * wave: nodes timing out during the wait add none), cleared only by a node launched since being ready.
   * Launching as many again would pay for as many nodes for nothing, again and again, as Cluster
   * Autoscaler's node group backoff avoids. True when it started or lengthened a backoff.
   */
  neverReady(now: number, message: string): boolean {
    this.neverReadySince = now;
    this.reason = message;
    return this.fail(now);
  }

  /** A node launched after the last never-ready one is ready: launches work again. */
  seeReady(nodes: readonly { readonly ready: boolean; readonly launchedAt: number }[]): void {
    const since = this.neverReadySince;
    if (since !== null && nodes.some((n) => n.ready && n.launchedAt > since)) this.neverReadySince = null;
  }

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
      this.fail(now);
      this.reason = newest.message;
      return true;
    }
    // Launched is not enough after nodes that never became ready: the next may not either.
    if (now >= this.until && this.failures > 0 && liveNodes >= wanted && this.neverReadySince === null) {
      this.failures = 0;
      this.reason = null;
    }
    return false;
  }

  /** Each failure outside a wait doubles the next wait, up to the cap. */
  private fail(now: number): boolean {
    if (now < this.until) return false;
    this.failures += 1;
    this.until = now + Math.min(this.policy.maxMs, this.policy.baseMs * 2 ** (this.failures - 1));
    return true;
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

/** A kept state as this boa writes it, or undefined (none, or another version's shape: start afresh). */
function backoffState(kept: unknown): BackoffState | undefined {
  if (kept === null || typeof kept !== 'object') return undefined;
  const k = kept as Record<string, unknown>;
  const time = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));
  const ok =
    typeof k.failures === 'number' &&
    Number.isInteger(k.failures) &&
    k.failures >= 0 &&
    time(k.until) &&
    time(k.lastFailureAt) &&
    time(k.neverReadySince) &&
    (k.reason === null || typeof k.reason === 'string');
  return ok ? (k as unknown as BackoffState) : undefined;
}
