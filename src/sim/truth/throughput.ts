/**
 * Step and sync time at (placement, per-GPU batch), from placements.csv and scalability.csv.
 *
 * Measured placement (up to 4 nodes of at most 4 GPUs): linear in local_bsz between that placement's
 * rows, as Pollux did. Beyond the measured range the nearest row is used (clamped); with the README's
 * batch bounds this only happens for ncf placements whose top batch rows were not measured.
 *
 * Any other placement: Pollux used scipy's LinearNDInterpolator (Delaunay) over (num_nodes capped at 16,
 * num_replicas, local_bsz) on per-(nodes, replicas, bsz) means of placements.csv plus scalability.csv.
 * Adaptation (no Delaunay here): every measured (nodes, replicas) site is a curve in local_bsz (linear,
 * clamped); sites form columns by node count (1-4 from placements.csv means, 6/8/12/16 from
 * scalability.csv). At a query with n nodes (capped at the largest column) and r replicas, each of the
 * two neighbouring columns is read at the same GPUs per node r/n (linear in replicas), then the two are
 * blended linearly in n. This is exact at every measured point and matches the Delaunay result along
 * the 4-per-node edge (r = 4n, a face of the hull) at measured batch sizes.
 */
import { bracket, interp1 } from './interp.ts';
import { numNodes, numReplicas, type Placement, placementKey } from './placement.ts';
import type { AppTables } from './tables.ts';

export interface StepTimes {
  readonly stepTime: number;
  readonly syncTime: number;
}

interface Curve {
  readonly bsz: number[];
  readonly step: number[];
  readonly sync: number[];
}

interface Column {
  readonly nodes: number;
  readonly replicas: number[];
  readonly curves: Curve[];
}

export interface ThroughputModel {
  /** Step and sync time (seconds) for one optimizer step without accumulation. */
  at(placement: Placement, localBsz: number): StepTimes;
  /** Identifies the curve used for a placement: equal ids give equal times for every batch size. */
  siteId(placement: Placement): string;
  /** Whether placements.csv measured this placement (up to rotation). */
  isMeasured(placement: Placement): boolean;
}

type Sample = { bsz: number; step: number; sync: number };

/** Averages samples with the same batch size and sorts them into a curve. */
function toCurve(samples: readonly Sample[]): Curve {
  const sums = new Map<number, { step: number; sync: number; n: number }>();
  for (const s of samples) {
    const acc = sums.get(s.bsz) ?? { step: 0, sync: 0, n: 0 };
    sums.set(s.bsz, { step: acc.step + s.step, sync: acc.sync + s.sync, n: acc.n + 1 });
  }
  const bsz = [...sums.keys()].sort((a, b) => a - b);
  const get = (b: number) => sums.get(b) as { step: number; sync: number; n: number };
  return {
    bsz,
    step: bsz.map((b) => get(b).step / get(b).n),
    sync: bsz.map((b) => get(b).sync / get(b).n),
  };
}

function curveAt(curve: Curve, localBsz: number): StepTimes {
  return {
    stepTime: interp1(curve.bsz, curve.step, localBsz),
    syncTime: interp1(curve.bsz, curve.sync, localBsz),
  };
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

function buildColumns(tables: AppTables): Column[] {
  const sites = [
    ...tables.placements.map((p) => ({
      nodes: p.placement.length,
      replicas: [...p.placement].reduce((a, d) => a + Number(d), 0),
      s: { bsz: p.localBsz, step: p.stepTime, sync: p.syncTime },
    })),
    ...tables.scalability.map((r) => ({
      nodes: r.numNodes,
      replicas: r.numReplicas,
      s: { bsz: r.localBsz, step: r.stepTime, sync: r.syncTime },
    })),
  ];
  const byNodes = groupBy(sites, (x) => String(x.nodes));
  return [...byNodes.entries()]
    .map(([nodes, list]) => {
      const byReplicas = groupBy(list, (x) => String(x.replicas));
      const replicas = [...byReplicas.keys()].map(Number).sort((a, b) => a - b);
      const curves = replicas.map((r) => toCurve((byReplicas.get(String(r)) ?? []).map((x) => x.s)));
      return { nodes: Number(nodes), replicas, curves };
    })
    .sort((a, b) => a.nodes - b.nodes);
}

function columnAt(column: Column, replicas: number, localBsz: number): StepTimes {
  const { i, w } = bracket(column.replicas, replicas);
  const a = curveAt(column.curves[i] as Curve, localBsz);
  if (w === 0) return a;
  const b = curveAt(column.curves[i + 1] as Curve, localBsz);
  return {
    stepTime: a.stepTime + (b.stepTime - a.stepTime) * w,
    syncTime: a.syncTime + (b.syncTime - a.syncTime) * w,
  };
}

export function buildThroughputModel(tables: AppTables): ThroughputModel {
  const exact = new Map<string, Curve>();
  for (const [key, rows] of groupBy(
    tables.placements,
    (p) => placementKey([...p.placement].map(Number)) ?? '',
  )) {
    exact.set(key, toCurve(rows.map((p) => ({ bsz: p.localBsz, step: p.stepTime, sync: p.syncTime }))));
  }
  const columns = buildColumns(tables);
  if (columns.length === 0) throw new RangeError('no throughput measurements');
  const nodeCounts = columns.map((c) => c.nodes);
  const maxNodes = nodeCounts[nodeCounts.length - 1] as number;
  const shape = (placement: Placement) => ({
    nodes: Math.min(numNodes(placement), maxNodes),
    replicas: numReplicas(placement),
  });

  const interpolated = (placement: Placement, localBsz: number): StepTimes => {
    const { nodes, replicas } = shape(placement);
    const perNode = replicas / nodes;
    const { i, w } = bracket(nodeCounts, nodes);
    const c0 = columns[i] as Column;
    const a = columnAt(c0, perNode * c0.nodes, localBsz);
    if (w === 0) return a;
    const c1 = columns[i + 1] as Column;
    const b = columnAt(c1, perNode * c1.nodes, localBsz);
    return {
      stepTime: a.stepTime + (b.stepTime - a.stepTime) * w,
      syncTime: a.syncTime + (b.syncTime - a.syncTime) * w,
    };
  };

  return {
    at(placement, localBsz) {
      const key = placementKey(placement);
      const curve = key === undefined ? undefined : exact.get(key);
      return curve ? curveAt(curve, localBsz) : interpolated(placement, localBsz);
    },
    siteId(placement) {
      const key = placementKey(placement);
      if (key !== undefined && exact.has(key)) return key;
      const { nodes, replicas } = shape(placement);
      return `${nodes}n${replicas}r`;
    },
    isMeasured(placement) {
      const key = placementKey(placement);
      return key !== undefined && exact.has(key);
    },
  };
}
