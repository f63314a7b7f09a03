import { pino, type Logger } from 'pino';
import type {
  Clock,
  NodeGroupState,
  NodePool,
  PoolNode,
  ResizeResult,
  TerminateResult,
} from '../../service/ports.ts';
import { clampToBounds } from '../bounds.ts';
import {
  type LocalNode,
  type LocalPoolConfig,
  localPoolConfigSchema,
  type LocalPoolSnapshot,
  localPoolSnapshotSchema,
  parseOrThrow,
  type ResolvedLocalPoolConfig,
} from './local-pool-state.ts';

export interface LocalPoolOptions {
  readonly logger?: Logger;
  /**
   * Called with the new snapshot after every change of state (a resize), before setDesiredSize returns,
   * so the service can store it in the same step and a crash cannot lose or duplicate nodes.
   */
  readonly onChange?: (snapshot: LocalPoolSnapshot) => void;
}

/**
 * An emulated node group for the embedded default (no AWS). New nodes are listed at once (booting,
 * ready=false) with launchedAt = now and are ready bootSeconds later. The service scales in with
 * terminate(ids): exactly those nodes are released (listed, still paid, not ready; gone releaseSeconds
 * later) and the desired size drops by as many. A lower desired size alone releases the newest
 * unprotected nodes beyond it. Every time-dependent fact is derived from the injected clock, so a
 * virtual clock skips boot and release time.
 */
export class LocalNodePool implements NodePool {
  readonly kind = 'local' as const;
  private readonly config: ResolvedLocalPoolConfig;
  private readonly logger: Logger;
  private desiredSize: number;
  private nextNodeNumber = 1;
  /** In launch order, so the newest live node is the last one without releasedAt. */
  private nodes: LocalNode[] = [];

  constructor(
    config: LocalPoolConfig,
    private readonly clock: Clock,
    private readonly options: LocalPoolOptions = {},
    /** A toJSON() output to restore; see fromJSON. */
    snapshot?: unknown,
  ) {
    this.config = parseOrThrow(localPoolConfigSchema, config, 'local node pool config');
    this.logger = (options.logger ?? pino()).child({ component: 'local-node-pool' });
    this.desiredSize = this.config.minSize;
    let storedDesired = 0;
    if (snapshot !== undefined) {
      const state = parseOrThrow(localPoolSnapshotSchema, snapshot, 'local node pool snapshot');
      this.nodes = state.nodes.map((n) => ({ ...n }));
      this.nextNodeNumber = state.nextNodeNumber;
      storedDesired = state.desiredSize;
      this.desiredSize = clampToBounds(state.desiredSize, this.config).requested;
    }
    const launchedOrReleased = this.reconcile(clock.now());
    if (launchedOrReleased || this.desiredSize !== storedDesired) options.onChange?.(this.toJSON());
  }

  /**
   * Restores a pool from toJSON() output (e.g. after kill -9). Bounds and timings come from `config`,
   * the current deployment's; a stored desired size now out of bounds is clamped and the nodes
   * reconciled (and onChange called). Restoring the same snapshot twice gives the same nodes: ids come
   * from the snapshot's counter and are never re-issued.
   */
  static fromJSON(
    config: LocalPoolConfig,
    snapshot: unknown,
    clock: Clock,
    options: LocalPoolOptions = {},
  ): LocalNodePool {
    return new LocalNodePool(config, clock, options, snapshot);
  }

  toJSON(): LocalPoolSnapshot {
    return {
      version: 1,
      desiredSize: this.desiredSize,
      nextNodeNumber: this.nextNodeNumber,
      nodes: this.nodes.map((n) => ({ ...n })),
    };
  }

  async describe(): Promise<NodeGroupState> {
    return { minSize: this.config.minSize, maxSize: this.config.maxSize, desiredSize: this.desiredSize };
  }

  async setDesiredSize(target: number): Promise<ResizeResult> {
    const { requested, clampedBy } = clampToBounds(target, this.config);
    const fields = { target, requested, desiredSize: this.desiredSize, ...this.bounds() };
    if (clampedBy) this.logger.info({ event: 'resize.clamped', ...fields, clampedBy }, 'resize clamped');
    if (requested === this.desiredSize) {
      this.logger.debug({ event: 'resize.skipped', ...fields, reason: 'unchanged' }, 'resize skipped');
      return { requested };
    }
    this.desiredSize = requested;
    this.reconcile(this.clock.now());
    this.logger.info(
      { event: 'resize.applied', ...fields, nodes: this.liveNodes().length },
      'resize applied',
    );
    this.options.onChange?.(this.toJSON());
    return { requested };
  }

  async listNodes(): Promise<PoolNode[]> {
    const now = this.clock.now();
    this.forgetGone(now);
    const bootMs = this.config.bootSeconds * 1000;
    return this.nodes.map((n) => {
      const booted = now >= n.launchedAt + bootMs;
      const waitingFor =
        n.releasedAt !== undefined ? 'released' : !booted ? 'booting' : n.cordoned ? 'cordoned' : undefined;
      return {
        id: n.id,
        launchedAt: n.launchedAt,
        gpus: this.config.gpusPerNode,
        ready: waitingFor === undefined,
        ...(n.cordoned ? { cordoned: true } : {}),
        ...(n.releasedAt !== undefined ? { leaving: true } : {}),
        ...(waitingFor ? { waitingFor } : {}),
      };
    });
  }

  async cordon(nodeIds: readonly string[]): Promise<void> {
    let changed = false;
    for (const node of this.liveNodes()) {
      if (nodeIds.includes(node.id) && !node.cordoned) {
        node.cordoned = true;
        changed = true;
        this.logger.info({ event: 'node.cordoned', nodeId: node.id }, 'node cordoned');
      }
    }
    if (changed) this.options.onChange?.(this.toJSON());
  }

  async uncordon(nodeIds: readonly string[]): Promise<void> {
    let changed = false;
    for (const node of this.liveNodes()) {
      if (nodeIds.includes(node.id) && node.cordoned) {
        node.cordoned = false;
        changed = true;
        this.logger.info({ event: 'node.uncordoned', nodeId: node.id }, 'node uncordoned');
      }
    }
    if (changed) this.options.onChange?.(this.toJSON());
  }

  /**
   * Releases exactly these nodes and lowers the desired size by as many, as
   * TerminateInstanceInAutoScalingGroup(ShouldDecrementDesiredCapacity) does; below minSize the group
   * launches a replacement. Ids not live any more are reported as already gone.
   */
  async terminate(nodeIds: readonly string[]): Promise<TerminateResult> {
    const now = this.clock.now();
    const terminated: string[] = [];
    const replaced: string[] = [];
    const alreadyGone: string[] = [];
    for (const id of new Set(nodeIds)) {
      const node = this.liveNodes().find((n) => n.id === id);
      if (!node) {
        alreadyGone.push(id);
        continue;
      }
      node.releasedAt = now;
      const atMin = this.desiredSize <= this.config.minSize;
      this.desiredSize = Math.max(this.config.minSize, this.desiredSize - 1);
      (atMin ? replaced : terminated).push(id);
      this.logger.info(
        { event: 'node.terminated', nodeId: id, desiredSize: this.desiredSize },
        'node terminated',
      );
    }
    if (terminated.length + replaced.length > 0) {
      this.reconcile(now);
      this.options.onChange?.(this.toJSON());
    }
    return { terminated, alreadyGone, ...(replaced.length > 0 ? { replaced } : {}) };
  }

  async protect(nodeIds: readonly string[], protect: boolean): Promise<void> {
    let changed = false;
    for (const node of this.liveNodes()) {
      if (nodeIds.includes(node.id) && (node.protectedFromScaleIn ?? false) !== protect) {
        node.protectedFromScaleIn = protect;
        changed = true;
      }
    }
    if (changed) this.options.onChange?.(this.toJSON());
  }

  private bounds() {
    return { minSize: this.config.minSize, maxSize: this.config.maxSize };
  }

  private liveNodes(): LocalNode[] {
    return this.nodes.filter((n) => n.releasedAt === undefined);
  }

  /** Released nodes are gone once their release time has passed; dropping them changes nothing visible. */
  private forgetGone(now: number): void {
    const releaseMs = this.config.releaseSeconds * 1000;
    this.nodes = this.nodes.filter((n) => n.releasedAt === undefined || now < n.releasedAt + releaseMs);
  }

  /** Launches or releases nodes so the live count equals the desired size; true if anything changed. */
  private reconcile(now: number): boolean {
    this.forgetGone(now);
    const live = this.liveNodes();
    for (let i = live.length; i < this.desiredSize; i++) {
      const node = { id: `local-${this.nextNodeNumber++}`, launchedAt: now };
      this.nodes.push(node);
      this.logger.info({ event: 'node.launched', nodeId: node.id, launchedAt: now }, 'node launched');
    }
    const surplus = live.length - this.desiredSize;
    // Protected nodes stay, as in an ASG: the desired size drops, fewer nodes go.
    const releasable = live.filter((n) => !n.protectedFromScaleIn);
    for (const node of releasable.slice(Math.max(0, releasable.length - Math.max(0, surplus))).reverse()) {
      node.releasedAt = now;
      this.logger.info({ event: 'node.released', nodeId: node.id, releasedAt: now }, 'node released');
    }
    return surplus < 0 || (surplus > 0 && releasable.length > 0);
  }
}
