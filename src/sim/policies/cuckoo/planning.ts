/**
 * CUCKOO's execution planning (section 3.3.3): job groups are matched to (GPU type, execution order)
 * slots by a min-cost flow, the cost of group g at order n on type k being its completion time
 * C1 = (n - 1) x T_k + t_gk (Eq. 13; T_k the groups' average time on k, t_gk g's own) plus its time
 * over deadline C2 = max(0, C1 - D_g) (Eq. 14), as in the paper's Table 6. Order 1 starts now; later
 * orders are the plan's queue and only decide who goes first.
 *
 * Adapted: the paper assumes every group asks for one GPU. Ours ask for their members' common width w
 * (Eq. 3), so a slot of type k holds floor(free GPUs of k / w) groups at each order, and groups of
 * different widths are planned one width at a time, widest first (each exact; together a heuristic
 * that keeps wide groups from being starved by fragmentation).
 */
import { FlowNetwork } from './flow.ts';

export interface PlanGroup {
  /** GPUs the group needs (every member's width). */
  readonly width: number;
  /** Its run time left on each GPU type (index = type), seconds; Infinity = cannot run there. */
  readonly seconds: readonly number[];
  /** Seconds from now to its earliest member's deadline (Infinity = none). */
  readonly deadlineIn: number;
}

export interface PlanSlot {
  /** Index of the GPU type, or -1 when the group is not planned (no slot fits it). */
  readonly type: number;
  /** Execution order on that type, 1 = starts now. */
  readonly order: number;
}

/** Eq. 13 + Eq. 14: the cost of running a group at order `order` on a type with average time `avg`. */
export function slotCost(seconds: number, avg: number, order: number, deadlineIn: number): number {
  const complete = (order - 1) * avg + seconds;
  return complete + Math.max(0, complete - deadlineIn);
}

/**
 * The min-cost plan: each group gets one (type, order) slot, or none when no type has room for its
 * width at all. `freeGpus[k]` are the GPUs of type k available to these groups now.
 */
export function planGroups(groups: readonly PlanGroup[], freeGpus: readonly number[]): PlanSlot[] {
  const plan: PlanSlot[] = groups.map(() => ({ type: -1, order: 0 }));
  const free = [...freeGpus];
  const widths = [...new Set(groups.map((g) => g.width))].sort((a, b) => b - a);
  for (const width of widths) {
    const members = groups.flatMap((g, i) => (g.width === width ? [i] : []));
    const lanes = free.map((f) => Math.floor(f / width));
    const slots = planOneWidth(
      members.map((i) => groups[i] as PlanGroup),
      lanes,
    );
    slots.forEach((slot, m) => {
      plan[members[m] as number] = slot;
      if (slot.order === 1) free[slot.type] = (free[slot.type] as number) - width;
    });
  }
  return plan;
}

/** Groups of one width onto lanes[k] parallel lanes of each type k, orders 1..enough for all. */
export function planOneWidth(groups: readonly PlanGroup[], lanes: readonly number[]): PlanSlot[] {
  const types = lanes.length;
  const totalLanes = lanes.reduce((s, l) => s + l, 0);
  if (groups.length === 0 || totalLanes === 0) return groups.map(() => ({ type: -1, order: 0 }));
  const orders = Math.ceil(groups.length / totalLanes);
  // T_k: the groups' average time on type k (over those that can run there).
  const avg = Array.from({ length: types }, (_, k) => {
    const ts = groups.map((g) => g.seconds[k] as number).filter(Number.isFinite);
    return ts.length > 0 ? ts.reduce((s, t) => s + t, 0) / ts.length : 0;
  });
  const source = 0;
  const sink = 1;
  const groupNode = (i: number) => 2 + i;
  const slotNode = (k: number, n: number) => 2 + groups.length + k * orders + (n - 1);
  const net = new FlowNetwork(2 + groups.length + types * orders);
  const arcs: { arc: number; group: number; type: number; order: number }[] = [];
  groups.forEach((g, i) => {
    net.addArc(source, groupNode(i), 1, 0);
    for (let k = 0; k < types; k++) {
      const t = g.seconds[k] as number;
      if ((lanes[k] as number) === 0 || !Number.isFinite(t)) continue;
      for (let n = 1; n <= orders; n++) {
        const arc = net.addArc(
          groupNode(i),
          slotNode(k, n),
          1,
          slotCost(t, avg[k] as number, n, g.deadlineIn),
        );
        arcs.push({ arc, group: i, type: k, order: n });
      }
    }
  });
  for (let k = 0; k < types; k++) {
    for (let n = 1; n <= orders; n++) net.addArc(slotNode(k, n), sink, lanes[k] as number, 0);
  }
  net.minCostMaxFlow(source, sink);
  const plan: PlanSlot[] = groups.map(() => ({ type: -1, order: 0 }));
  for (const a of arcs) if (net.flowOn(a.arc) > 0) plan[a.group] = { type: a.type, order: a.order };
  return plan;
}
