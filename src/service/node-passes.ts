import { bookedGpusOn } from './idle-fill.ts';
import { nodeReconcilerFor } from './nodes/index.ts';
import type { NodeReconciler } from './nodes/reconciler.ts';
import type { NodeTickInput } from './nodes/reconciler-inputs.ts';
import type { BoaService } from './service.ts';

/**
 * The scheduler's side of the node reconciler: what a pass works from (the target, the nodes as last
 * listed, what is placed where, the budget's node cap), the pass each tick runs, and the pass between
 * ticks when a removal's last replicas end, so an emptied node stops being paid for at once.
 */
export class NodePasses {
  /** Node group sizing, victim choice, drift and capacity (src/service/nodes). */
  readonly reconciler: NodeReconciler;
  /** The node count the last tick asked for (the target a pass between ticks works to). */
  private lastTarget: number | undefined;
  /** The most nodes the last tick's budget let boa pay for (NodeTickInput.paidCap); infinite: no budget. */
  private paidCap = Number.POSITIVE_INFINITY;
  private releasing: Promise<void> | null = null;

  constructor(
    private readonly service: BoaService,
    /** GPUs the last tick's placement put on a node. */
    private readonly placedOn: (name: string) => number,
  ) {
    this.reconciler = nodeReconcilerFor(service);
    service.execution.onNodesFreed = (freed) => this.nodesFreed(freed);
  }

  /** Chooses removals now if the target asks for them; true when some chosen node had jobs. */
  chooseNow(target: number, paidCap: number): boolean {
    this.paidCap = paidCap;
    return this.reconciler.chooseNow(this.input(target));
  }

  /** The tick's pass, to the node count it decided. */
  afterTick(target: number): void {
    this.lastTarget = target;
    this.reconciler.afterTick(this.input(target));
  }

  /** Waits for the passes in flight (tests, shutdown). */
  async settle(): Promise<void> {
    while (this.releasing) await this.releasing;
    await this.reconciler.settle();
  }

  private input(target: number): NodeTickInput {
    const { state, execution, deps } = this.service;
    const now = deps.clock.now();
    // The plan's GPUs on a node: lent ones ranked as load would remove two jobs' node before one job's.
    const booked = bookedGpusOn(this.placedOn, state.jobs.values());
    return {
      target,
      nodes: state.nodes,
      group: state.group,
      // GPUs placed there as of the last tick (a job ended since still counts: a node is never removed
      // early), and a replica still stopping there (grace period) after its job moved off, or one that
      // may be, as the executor has not answered since the start.
      gpusInUse: (name) => booked(name) + (execution.mayHoldReplicas(name, now) ? 1 : 0),
      knownInUse: (name) => booked(name) + (execution.nodesWithReplicas.has(name) ? 1 : 0),
      ...(Number.isFinite(this.paidCap) ? { paidCap: this.paidCap } : {}),
    };
  }

  /**
   * The last replicas on some nodes ended between ticks: if a removal waits for one of them, the nodes
   * are listed again and a node pass runs now.
   */
  private nodesFreed(freed: ReadonlySet<string>): void {
    const target = this.lastTarget;
    if (target === undefined || this.releasing || !this.reconciler.waitsOn(freed)) return;
    const { state, deps } = this.service;
    this.releasing = (async () => {
      const listing = state.nodesListing;
      try {
        const nodes = await deps.pool.listNodes();
        const group = await deps.pool.describe();
        // A tick that listed meanwhile has newer ones, and its own node pass.
        if (state.tickStartedAt !== undefined || state.nodesListing !== listing) return;
        state.nodes = nodes;
        state.group = group;
      } catch (error) {
        // The next tick takes the removal on instead.
        state.counters.poolFailures += 1;
        deps.logger.warn(
          { event: 'pool_unavailable', error: (error as Error).message },
          'node pool not answering',
        );
        return;
      }
      await this.reconciler.settle();
      this.reconciler.afterTick(this.input(target));
      await this.reconciler.settle();
    })().finally(() => {
      this.releasing = null;
    });
  }
}
