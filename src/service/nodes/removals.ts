import type { Logger } from 'pino';
import type { NodeRemovalRow, NodeRemovals, RemovalReason } from '../../store/node-removals.ts';
import type { Clock, NodePool, PoolNode } from '../ports.ts';
import { allocationName, type GpusInUse } from './victims.ts';
import { listedIds, sameIds } from './listing.ts';

export interface RemovalDeps {
  readonly pool: Pick<NodePool, 'cordon' | 'uncordon' | 'terminate'>;
  readonly removals: NodeRemovals;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The nodes boa is removing, one by one: chosen, cordoned, emptied, terminated. Each state is stored
 * before the call it announces, so a restart carries each removal on from where it was left. A
 * terminated node can stay listed for minutes (EKS holds it in Terminating:Wait while it drains, EC2
 * still says running): it is remembered until a listing no longer has it, so it is never counted,
 * offered to jobs, or chosen again.
 */
export class RemovalWalk {
  /** Open removals by node id (the store's rows, cached). */
  readonly #open = new Map<string, NodeRemovalRow>();
  /** Nodes boa has terminated that the last listing still had, with their removal (read back after a restart). */
  readonly #terminated = new Map<string, NodeRemovalRow>();
  /** The listing last noted and its node ids. */
  #noted: readonly PoolNode[] | undefined;
  #listed: ReadonlySet<string> = new Set<string>();
  /** A node terminated since the last note: it may not be listed, so the next note checks them all. */
  #finishedSince = false;

  constructor(private readonly deps: RemovalDeps) {
    for (const row of deps.removals.open()) this.#open.set(row.nodeId, row);
  }

  /**
   * Takes in a listing: terminated nodes it no longer has are forgotten, and nodes it has for the first
   * time (all of them after a restart) are looked up in the store, so a node terminated before a restart
   * or a listing that came back empty is still known as terminated.
   */
  note(nodes: readonly PoolNode[]): void {
    // The same listing again: a tick whose listing failed reuses the last one.
    if (nodes === this.#noted) return;
    const last = this.#noted;
    this.#noted = nodes;
    // The same node ids as the last listing (most ticks): none is new, every terminated one is still
    // listed, and #listed holds these ids already; no set of 1,400 ids is built.
    if (last !== undefined && !this.#finishedSince && sameIds(last, nodes)) return;
    this.#finishedSince = false;
    const listed = listedIds(nodes);
    const firstSeen: string[] = [];
    for (const node of nodes) if (!this.#listed.has(node.id)) firstSeen.push(node.id);
    for (const id of this.#terminated.keys()) if (!listed.has(id)) this.#terminated.delete(id);
    if (firstSeen.length > 0)
      for (const row of this.deps.removals.terminatedAmong(firstSeen))
        if (!this.#terminated.has(row.nodeId)) this.#terminated.set(row.nodeId, row);
    this.#listed = listed;
  }

  /** Whether boa is removing this node or has terminated it: it is not to be used, kept or chosen. */
  includes(nodeId: string): boolean {
    return this.#open.has(nodeId) || this.#terminated.has(nodeId);
  }

  /** Terminated by boa and still listed (on its way out, no longer part of the group). */
  terminated(nodeId: string): boolean {
    return this.#terminated.has(nodeId);
  }

  get size(): number {
    return this.#open.size;
  }

  rows(): NodeRemovalRow[] {
    return [...this.#open.values()];
  }

  /**
   * The removals of nodes terminated and still listed (EKS holds one in Terminating:Wait while it
   * drains, for minutes): paid and not yet gone, they were said nowhere (found in review).
   */
  terminatedRows(): NodeRemovalRow[] {
    return [...this.#terminated.values()];
  }

  /** Records a node's removal; a node being removed or terminated already keeps its one removal. */
  choose(node: PoolNode, reason: RemovalReason, now: number): void {
    if (this.includes(node.id)) return;
    const row = this.deps.removals.insert({ nodeId: node.id, nodeName: node.name ?? null, reason, at: now });
    this.#open.set(node.id, row);
    this.deps.logger.info(
      { event: 'node.chosen', nodeId: node.id, node: node.name ?? null, reason },
      'node chosen for removal',
    );
  }

  /**
   * Takes each open removal one step further: cordon, wait until nothing is placed there, terminate.
   * Returns how many nodes were terminated; `onTerminated` hears of each at once (a later step may throw),
   * and whether the group's desired size went down with it (not when that would break its minimum).
   */
  async carryOn(
    nodes: readonly PoolNode[],
    busy: GpusInUse,
    onTerminated: (decremented: boolean) => void,
  ): Promise<number> {
    let terminated = 0;
    for (const row of this.rows()) {
      // One removal that fails (a refusal for that instance, say) holds up neither the others nor the
      // rest of the pass (the resize a waiting job needs): it is logged and tried again next pass.
      try {
        terminated += await this.step(row, nodes, busy, onTerminated);
      } catch (error) {
        this.deps.logger.warn(
          {
            event: 'node.remove-failed',
            nodeId: row.nodeId,
            state: row.state,
            error: (error as Error).message,
          },
          'a node removal step failed; tried again at the next pass',
        );
      }
    }
    return terminated;
  }

  /** One removal one step further; 1 when it terminated its node now. */
  private async step(
    row: NodeRemovalRow,
    nodes: readonly PoolNode[],
    busy: GpusInUse,
    onTerminated: (decremented: boolean) => void,
  ): Promise<number> {
    const { pool, logger } = this.deps;
    const node = nodes.find((n) => n.id === row.nodeId);
    // `terminating` is stored before the call, so a crash or a failed call may have sent nothing: one
    // not listed is asked for all the same. The pool answers a node no longer in the group as already
    // gone, sending nothing; one a listing only missed is terminated (found in review: recorded gone, it
    // stayed paid, never used nor removed).
    if (!node && row.state !== 'terminating') {
      // Never sent: gone by someone else's hand, or a listing that missed it (EC2's eventual
      // consistency). Closed as never terminated, so a node listed again is a node like any other, used
      // or chosen again; recorded terminated it stayed paid and was never used or removed (found in review).
      this.deps.removals.advance(row.id, 'cancelled', this.deps.clock.now(), { outcome: 'not-listed' });
      this.#open.delete(row.nodeId);
      this.deps.logger.info(
        { event: 'node.removal-dropped', nodeId: row.nodeId, reason: row.reason, state: row.state },
        'a node chosen for removal is no longer listed; nothing was sent to it',
      );
      return 0;
    }
    if (node?.replacedGroup && row.state !== 'terminating') {
      // Chosen before its group was replaced (by a run before boa's restart onto the new group): the
      // group is CloudFormation's to delete with its nodes, which EKS drains, and boa's terminate would
      // lower its size (refused anyway once the stack's IAM names the new group). It is paid and
      // counted until gone; kept open, it also had the new group asked for a node more.
      this.deps.removals.advance(row.id, 'cancelled', this.deps.clock.now(), { outcome: 'replaced-group' });
      this.#open.delete(row.nodeId);
      logger.info(
        {
          event: 'node.removal-dropped',
          nodeId: row.nodeId,
          reason: row.reason,
          nodegroup: node.replacedGroup,
        },
        "a node chosen for removal is in a replaced node group: left to the group's deletion",
      );
      return 0;
    }
    if (row.state === 'chosen' || row.state === 'cordoning') {
      // Stored first: a cordon applied whose answer was lost (a timeout, a crash) is still undone if the
      // removal is called off; a node kept cordoned runs nothing and is removed as never ready.
      if (row.state === 'chosen') this.advance(row, 'cordoning');
      try {
        await pool.cordon([row.nodeId]);
      } catch (error) {
        // boa already places nothing there; the cordon keeps others off. A refusal (403: RBAC
        // without patch on nodes) must not keep an idle node paid for, so it is logged and passed;
        // anything else is retried at the next pass.
        if (!forbidden(error)) throw error;
        logger.warn(
          { event: 'node.cordon-failed', nodeId: row.nodeId, error: (error as Error).message },
          'cordon failed; removing the node anyway once it is empty',
        );
      }
      this.advance(row, 'cordoned');
    }
    if (row.state === 'cordoned' && node) {
      const jobs = busy(allocationName(node));
      if (jobs > 0) {
        logger.debug(
          { event: 'node.draining', nodeId: row.nodeId, gpusInUse: jobs },
          'waiting for jobs to move',
        );
        return 0;
      }
      this.advance(row, 'terminating');
    }
    if (row.state !== 'terminating') return 0;
    if (node?.foreignGpus)
      // boa's budget pays for every node of its group: one holding another's GPU pod goes when the count
      // asks for it (chosen after idle ones), and EKS's drain evicts that pod.
      logger.warn(
        {
          event: 'node.foreign-pod-removed',
          nodeId: row.nodeId,
          node: node.name ?? null,
          reason: row.reason,
          pods: node.foreignPods ?? [],
          gpus: node.foreignGpus,
        },
        "removing a node that holds GPU pods boa did not create: the node count boa's budget allows asks for it; EKS's drain evicts them",
      );
    const result = await pool.terminate([row.nodeId]);
    const decremented = result.terminated.includes(row.nodeId);
    const sent = decremented || (result.replaced ?? []).includes(row.nodeId);
    if (sent) onTerminated(decremented);
    this.finish(row, sent ? 'sent' : 'already-gone');
    logger.info(
      {
        event: 'node.removed',
        nodeId: row.nodeId,
        reason: row.reason,
        outcome: sent ? 'sent' : 'already-gone',
        ...(sent && !decremented ? { replaced: true } : {}),
      },
      'node removed',
    );
    return sent ? 1 : 0;
  }

  /**
   * Calls a removal off before its node is terminated: the node is opened to jobs again (uncordoned
   * first, then the row stored as cancelled, so a crash between the two finishes the cancel next pass).
   * False when it cannot be: terminating already, or the node cannot be uncordoned (it goes on).
   */
  async cancel(row: NodeRemovalRow): Promise<boolean> {
    if (row.state === 'terminating') return false;
    if (row.state === 'cordoned' || row.state === 'cordoning') {
      try {
        await this.deps.pool.uncordon([row.nodeId]);
      } catch (error) {
        this.deps.logger.warn(
          { event: 'node.uncordon-failed', nodeId: row.nodeId, error: (error as Error).message },
          'uncordon failed; the removal goes on',
        );
        return false;
      }
    }
    this.deps.removals.advance(row.id, 'cancelled', this.deps.clock.now());
    this.#open.delete(row.nodeId);
    this.deps.logger.info(
      { event: 'node.removal-cancelled', nodeId: row.nodeId, node: row.nodeName, state: row.state },
      'the target rose: removal called off, the node kept',
    );
    return true;
  }

  private advance(row: NodeRemovalRow, state: 'cordoning' | 'cordoned' | 'terminating'): void {
    const at = this.deps.clock.now();
    this.deps.removals.advance(row.id, state, at);
    row.state = state;
    row.updatedAt = at;
  }

  private finish(row: NodeRemovalRow, outcome: 'sent' | 'already-gone'): void {
    const at = this.deps.clock.now();
    this.deps.removals.advance(row.id, 'terminated', at, { terminatedAt: at, outcome });
    this.#open.delete(row.nodeId);
    this.#terminated.set(row.nodeId, { ...row, state: 'terminated' });
    this.#finishedSince = true;
  }
}

/**
 * A refusal (HTTP 403). The Kubernetes client's ApiException carries the status as `code`; the retry
 * layer wraps it (KubeCallError, kind 'forbidden' or 'refused') with the ApiException as its cause.
 */
function forbidden(error: unknown): boolean {
  const status = (e: unknown) => (e as { code?: unknown } | undefined)?.code;
  return status(error) === 403 || status((error as { cause?: unknown } | undefined)?.cause) === 403;
}

/** The latest node boa terminated, for /v1/status: scale-in sends no resize. */
export function lastRemoval(row: NodeRemovalRow | undefined) {
  if (!row) return null;
  const at = row.terminatedAt ?? row.updatedAt;
  return { node: row.nodeName ?? row.nodeId, reason: row.reason, at: new Date(at).toISOString() };
}
