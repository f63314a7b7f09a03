import type { MetricDatum, NodeGroupState, PoolNode } from '../ports.ts';
import { callOffWhileShort } from './call-off.ts';
import { CapacityBackoff, type CapacityView } from './capacity.ts';
import { DesiredSize } from './desired-size.ts';
import { followStoredGroups } from './followed-groups.ts';
import { updatedByEks } from './own-update.ts';
import { EksUpdateHold } from './update-hold.ts';
import { keptWithinPaidCap, raiseWithinPaidCap } from './paid-cap.ts';
import { chooseProvisionTimeouts } from './provision-timeouts.ts';
import { NodeReadiness } from './readiness.ts';
import { lastRemoval, RemovalWalk } from './removals.ts';
import { allocationName, chooseVictimsForeignLast, type GpusInUse } from './victims.ts';
import type { NodeReconcilerDeps, NodeTickInput } from './reconciler-inputs.ts';

// Tests name a tick's input from here.
export type { NodeTickInput } from './reconciler-inputs.ts';

/** Where the capacity backoff is kept across restarts. */
const BACKOFF_KEY = 'nodes.capacityBackoff';

export type NodeStatusView = ReturnType<NodeReconciler['view']>;

/**
 * The node group, level-triggered: every tick compares boa's target with the nodes that exist and the
 * group's desired size, and fixes the difference. boa chooses the nodes to remove (idle or never-ready
 * ones first); each is cordoned, left until no job is placed on it, then terminated with the desired
 * size lowered by one. Every step is recorded before it is sent, so after a crash a removal carries on
 * from where it stopped and is never sent twice. The desired size is raised to the target, and a size
 * changed outside boa is corrected (logged with both numbers); while launches fail for want of capacity
 * boa backs off and asks for no more than what exists. Runs in the background: the tick never waits,
 * and a pass never waits for a cloud update of boa's own that is still running (it checks it again
 * next pass, and sends no other resize meanwhile).
 */
export class NodeReconciler {
  private running: Promise<void> | null = null;
  private readonly backoff: CapacityBackoff;
  /** Nodes on their way out, one step a pass (removals.ts). */
  private readonly removing: RemovalWalk;
  /** The desired size boa expects, and the resizes it sends (desired-size.ts). */
  readonly size: DesiredSize;
  readonly counters = { provisionTimeouts: 0, driftCorrections: 0, terminations: 0, launchFailures: 0 };
  private lastGroup: NodeGroupState | undefined;
  private readonly readiness: NodeReadiness;
  /** While EKS applies an update boa did not ask for (updatedByEks): update-hold.ts. */
  private readonly updateHold: EksUpdateHold;
  /** The newest tick's target: a pass still running when the next tick chose more removals sizes on it. */
  private latestTarget: number | undefined;
  /** The newest tick's paidCap, read with latestTarget. */
  private latestPaidCap: number | undefined;

  /** The backoff's state as last stored (JSON), written again only when it changes. */
  private keptBackoff: string;

  constructor(private readonly deps: NodeReconcilerDeps) {
    this.backoff = new CapacityBackoff(deps.settings.backoff, deps.repo.getSetting(BACKOFF_KEY));
    this.keptBackoff = JSON.stringify(this.backoff.state());
    this.readiness = new NodeReadiness(deps.settings.notReadyGraceMs ?? 0);
    this.removing = new RemovalWalk(deps);
    this.size = new DesiredSize(deps);
    this.updateHold = new EksUpdateHold(deps, this.removing);
    followStoredGroups(deps.pool, deps.repo, deps.clock);
  }

  /**
   * The nodes placement may use now: ready for jobs, not being removed; ids as allocations name them.
   * A node in its not-ready grace (`notReadyGraceMs`) is offered keep-only: its jobs stay and nothing new
   * goes there, since moving a job costs it a restart and a missed heartbeat or a device plugin restart
   * is over in seconds. `heldGpus` (GPUs placed per node, by allocation name) starts the grace of a node
   * seen for the first time not ready with jobs on it: they were placed there when it was ready, before
   * a restart of boa lost when that was.
   */
  usable(nodes: readonly PoolNode[], heldGpus?: () => ReadonlyMap<string, number>): PoolNode[] {
    // A plain loop: this runs inside every tick's decision, over every node.
    const now = this.deps.clock.now();
    let held: ReadonlyMap<string, number> | undefined;
    const usable: PoolNode[] = [];
    this.removing.note(nodes);
    for (const node of nodes) {
      if (this.removing.includes(node.id)) continue;
      // GPUs another's pod holds there are not placement's to give (the kubelet would refuse the pod).
      const n = node.foreignGpus ? { ...node, gpus: Math.max(0, node.gpus - node.foreignGpus) } : node;
      const id = n.name ?? n.id;
      if (!n.ready) {
        // The map is built once a tick, and only when a node not ready is seen for the first time.
        const holdsJobs = () => ((held ??= heldGpus?.() ?? new Map()).get(id) ?? 0) > 0;
        if (heldGpus && this.readiness.inGrace(n, now, holdsJobs)) usable.push({ ...n, id, keepOnly: true });
        continue;
      }
      usable.push(id !== n.id ? { ...n, id } : n);
    }
    return usable;
  }

  /** The tick's hook: starts a pass unless one is still running (the next tick sees what it missed). */
  afterTick(input: NodeTickInput): void {
    this.latestTarget = input.target;
    this.latestPaidCap = input.paidCap;
    if (this.running || !input.group) return;
    this.running = this.pass(input, input.group)
      .catch((error: Error) => {
        this.deps.logger.error({ event: 'nodes.failed', error: error.message }, 'node reconcile failed');
      })
      .finally(() => {
        this.running = null;
      });
  }

  /**
   * Chooses the nodes to remove, within the tick (the background pass carries removals on). True when
   * a chosen node has jobs placed on it: the tick then places again without it, so the jobs move now
   * and the node can go in this tick's pass, not a tick later (paid nodes do not linger above target).
   */
  chooseNow(input: NodeTickInput): boolean {
    const now = this.deps.clock.now();
    this.readiness.note(input.nodes, now);
    this.backoff.seeReady(input.nodes);
    this.removing.note(input.nodes);
    this.latestTarget = input.target;
    this.latestPaidCap = input.paidCap;
    const group = input.group;
    if (!group) return false;
    if (updatedByEks(group))
      return this.updateHold.choose(input.nodes, group, input.paidCap, () => this.liveLoad(input, now), now);
    this.updateHold.chooseOutside();
    const target = this.bounded(
      keptWithinPaidCap(input.nodes, input.target, input.paidCap, this.deps.settings.gpusPerNode),
      group,
    );
    const busy = this.liveLoad(input, now);
    // Overdue nodes first, so the scale-in below counts them as going and never picks them a second time.
    chooseProvisionTimeouts(input.nodes, busy, now, {
      readiness: this.readiness,
      removing: this.removing,
      backoff: this.backoff,
      counters: this.counters,
      logger: this.deps.logger,
      provisionMs: this.deps.settings.provisionMs,
    });
    this.keepBackoff(now);
    const kept = input.nodes.filter((n) => !n.leaving && !this.removing.includes(n.id));
    let placed = false;
    for (const victim of chooseVictimsForeignLast(kept, kept.length - target, busy)) {
      this.removing.choose(victim, 'scale-in', now);
      if (busy(allocationName(victim)) > 0) placed = true;
    }
    return placed;
  }

  /** Stored when it changed (a restart goes on with it): before any resize it leads to is sent. */
  private keepBackoff(now: number): void {
    const state = JSON.stringify(this.backoff.state());
    if (state === this.keptBackoff) return;
    this.deps.repo.putSetting(BACKOFF_KEY, JSON.parse(state), now);
    this.keptBackoff = state;
  }

  async settle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Whether a removal waits for one of these nodes (allocation names) to empty before terminating it. */
  waitsOn(names: ReadonlySet<string>): boolean {
    for (const row of this.removing.rows())
      if (row.state !== 'terminating' && names.has(row.nodeName ?? row.nodeId)) return true;
    return false;
  }

  private async pass(input: NodeTickInput, group: NodeGroupState): Promise<void> {
    const { pool, logger, clock } = this.deps;
    const now = clock.now();
    const busy = this.liveLoad(input, now);
    const nodes = input.nodes;
    const target = this.bounded(input.target, group);
    this.lastGroup = group;
    this.size.observe(group);
    if (updatedByEks(group)) {
      // Its surge nodes, taints and drains are EKS's; boa places jobs on the nodes that are ready and
      // resizes nothing until the group is ACTIVE again (EKS refuses config updates meanwhile anyway).
      const carryOn = () => this.carryOnRemovals(nodes, busy);
      await this.updateHold.pass(nodes, group, () => this.latestPaidCap, target, busy, carryOn, now);
      this.deps.onGroup?.(group);
      return;
    }
    // The size EKS's update left is where boa starts from: not drift.
    if (this.updateHold.ended()) this.size.accept(group);
    // While boa's own update runs, the group may show the size before it or after it: no drift then.
    const unanswered = this.removing.rows().filter((r) => r.state === 'terminating').length;
    const expected = this.size.drift(group, unanswered);
    if (expected !== undefined) {
      this.counters.driftCorrections += 1;
      logger.warn(
        { event: 'nodes.drift', boa: expected, aws: group.desiredSize, target },
        'desired size changed outside boa; correcting',
      );
    }
    this.removing.note(nodes);
    // On the newest tick's target (callOffWhileShort asks again before each).
    // No removal the ceiling needs beside a replaced group's nodes is called off (chooseNow chose it so).
    const short = () =>
      this.bounded(
        keptWithinPaidCap(
          nodes,
          this.latestTarget ?? target,
          this.latestPaidCap,
          this.deps.settings.gpusPerNode,
        ),
        group,
      ) - nodes.filter((n) => !n.leaving && !this.removing.includes(n.id)).length;
    await callOffWhileShort(this.removing, nodes, busy, short);
    const terminated = await this.carryOnRemovals(nodes, busy);
    const current = terminated > 0 ? await pool.describe() : group;
    this.lastGroup = current;
    // Nodes terminated by boa, in this pass or before and still listed, are out of the group already.
    const live = nodes.filter((n) => !n.leaving && !this.removing.terminated(n.id)).length;
    // The open removals are read now, a later tick's included, so the target is that tick's too: its own
    // tick's, higher before a cut, plus the nodes the cut chose raised the group (found in review).
    const targetNow = this.bounded(this.latestTarget ?? target, current);
    let want = targetNow + this.removing.rows().filter((r) => nodes.some((n) => n.id === r.nodeId)).length;
    if (this.backoff.observe(current, live, want, now)) {
      this.counters.launchFailures += 1;
      logger.warn(
        { event: 'nodes.capacity', ...this.backoff.view(now), desiredSize: current.desiredSize, live },
        'instances failed to launch; backing off',
      );
    }
    this.keepBackoff(now);
    // While backing off, ask only for the nodes that exist: the group stops retrying launches, and no
    // burst of nodes arrives later that nobody planned for.
    if (this.backoff.active(now)) want = Math.min(want, live);
    want = Math.min(
      want,
      raiseWithinPaidCap(
        nodes,
        Math.max(live, current.desiredSize),
        this.latestPaidCap,
        this.removing,
        this.deps.settings.gpusPerNode,
      ),
    );
    // A group of another GPU count than configured is never raised: its nodes are not the ones sized.
    if (current.refusesRaises) want = Math.min(want, current.desiredSize);
    want = this.bounded(want, current);
    if (current.updateInFlight) {
      // boa's own update is still running: EKS refuses another meanwhile, and waiting for it could take
      // many minutes. Removals went on above; the size wanted is sent by the first pass after it ends.
      this.size.waitFor(current.updateInFlight, want, current);
      this.lastGroup = current;
      this.deps.onGroup?.(current);
      return;
    }
    this.size.accept(current);
    let reported = current;
    let raised = false;
    if (want !== current.desiredSize && (await this.size.send(want, current, nodes, now))) {
      reported = await pool.describe();
      this.size.followOwnUpdate(reported);
      raised = want > current.desiredSize;
    }
    this.lastGroup = reported;
    this.deps.onGroup?.(reported);
    // After the group is reported: a slow or failing listing (its retries) must not hold that back.
    if (raised) await this.listLaunched();
  }

  /** Each open removal one step further (removals.ts); how many nodes were terminated. */
  private carryOnRemovals(nodes: readonly PoolNode[], busy: GpusInUse): Promise<number> {
    return this.removing.carryOn(nodes, busy, (decremented) => {
      this.counters.terminations += 1;
      // At the group's minimum the size stays and the group replaces the node: nothing to expect.
      if (decremented) this.size.terminated();
    });
  }

  /** The listing after a raise (listBetweenTicks); a failure leaves it to the next tick's. */
  private async listLaunched(): Promise<void> {
    try {
      await this.deps.listBetweenTicks?.();
    } catch (error) {
      this.deps.logger.debug(
        { event: 'nodes.list-failed', error: (error as Error).message },
        'listing failed',
      );
    }
  }

  /** Never below the group's minimum, never above its maximum or the operator's cap. */
  private bounded(count: number, group: NodeGroupState): number {
    const max = Math.max(group.minSize, Math.min(group.maxSize, this.deps.settings.maxNodes ?? Infinity));
    return Math.min(max, Math.max(group.minSize, count));
  }

  /**
   * What is in use on each node, but nothing on a node whose kubelet has been silent (NotReady) for
   * provisionMs: its jobs moved off after their grace, and a replica still stopping there never will,
   * since only its kubelet could confirm the stop (a real API server keeps such a pod Terminating until
   * the node goes). Counted, it would keep the dead node paid for ever and its job's next generation
   * waiting for the pod; removing the node ends both (Kubernetes collects the pods of a deleted Node).
   */
  private liveLoad(input: NodeTickInput, now: number): GpusInUse {
    // Never within the not-ready grace, which keeps the node's jobs (a blip must not cost a node).
    const { provisionMs, notReadyGraceMs = 0 } = this.deps.settings;
    const deadAfterMs = Math.max(provisionMs, notReadyGraceMs);
    const dead = new Set<string>();
    for (const node of input.nodes) {
      if (node.waitingFor !== 'not-ready') continue;
      const known = input.knownInUse ?? input.gpusInUse;
      if (known(allocationName(node)) > 0) this.readiness.holdsReplicas(node, now);
      if (this.readiness.overdue(node, now, deadAfterMs)) dead.add(allocationName(node));
    }
    if (dead.size === 0) return input.gpusInUse;
    return (name) => (dead.has(name) ? 0 : input.gpusInUse(name));
  }

  /** For /v1/status: what the cloud reports, removals under way, capacity backoff. */
  view(now = this.deps.clock.now()) {
    const group = this.lastGroup;
    const capacity: CapacityView = this.backoff.view(now);
    return {
      name: group?.name ?? null,
      status: group?.status ?? null,
      issues: group?.issues ?? [],
      // Those terminated and still listed too, until a listing no longer has them.
      removing: [...this.removing.rows(), ...this.removing.terminatedRows()].map((r) => ({
        nodeId: r.nodeId,
        node: r.nodeName,
        reason: r.reason,
        state: r.state,
        since: new Date(r.chosenAt).toISOString(),
      })),
      lastRemoval: lastRemoval(this.deps.removals.lastTerminated()),
      // Whether boa is removing a listed node or has terminated it: status counts it apart from the
      // ready and not-ready nodes (read as ready until its cordon showed: found in review).
      removes: (nodeId: string) => this.removing.includes(nodeId),
      capacity: {
        ...capacity,
        backoffUntil: capacity.backoffUntil === null ? null : new Date(capacity.backoffUntil).toISOString(),
      },
      counters: { ...this.counters },
    };
  }

  metrics(now: number): MetricDatum[] {
    return [
      { name: 'CapacityBackoff', value: this.backoff.active(now) ? 1 : 0, unit: 'None' },
      { name: 'NodeLaunchFailures', value: this.counters.launchFailures, unit: 'Count' },
      { name: 'NodesProvisionTimedOut', value: this.counters.provisionTimeouts, unit: 'Count' },
      { name: 'NodeDriftCorrections', value: this.counters.driftCorrections, unit: 'Count' },
      { name: 'NodesRemoving', value: this.removing.size, unit: 'Count' },
    ];
  }
}
