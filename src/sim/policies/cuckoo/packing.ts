/**
 * CUCKOO's job packing (section 3.3.2, Algorithm 3) with its fallback for jobs that should not
 * co-locate and its heterogeneous anti-overpacking (section 3.3.4).
 *
 * Every pair of candidates that may share GPUs is an edge weighted by Eq. 12,
 * total_value = w x eff_value + (1 - w) x ddl_value, where eff_value is Eq. 1 on the GPU type where the
 * pair interleaves best among the types with free GPUs now (the paper's rule: with one type free, that
 * type; with several, the best of them) and ddl_value is Eq. 11,
 * (earliest deadline - now) / (latest deadline - now). A maximum-weight matching (blossom) picks the
 * pairs (each pair's efficiency in its better interleaving order); unmatched jobs run alone. w = 0.6, the paper's setting (its Fig. 12: best in 0.5..0.7).
 *
 * Fallback (the paper's section 5 sends jobs "unsuitable or uncertain for interleaving" to the native
 * scheduler): no edge between two jobs of different widths (Eq. 3), between two jobs that interleave
 * no faster than they run one after the other (eff_value <= 1), or when sharing would make a member
 * miss a deadline it meets alone on that type. Such jobs run alone.
 */
import {
  type Interference,
  estimateInterleaved,
  isolatedIterationMs,
  type StageProfile,
} from './interleave.ts';
import { maxWeightMatching, type WeightedEdge } from './matching.ts';

/** Eq. 12's w: the paper's setting. */
export const EFFICIENCY_WEIGHT = 0.6;

export interface PackCandidate {
  /** GPUs it would run on (a group's members share the same width). */
  readonly width: number;
  /** Its stage profile at that width on each GPU type (index = type). */
  readonly stages: readonly StageProfile[];
  /** Run time left alone at that width on each type, seconds. */
  readonly secondsAlone: readonly number[];
  /** Seconds from now to its deadline (Infinity = none). */
  readonly deadlineIn: number;
  /** Names its stage profiles (class and width), so estimates are computed once per pair of names. */
  readonly profileKey?: string;
}

export interface PackOptions {
  /** Eq. 12's w; 1 = efficiency only (Muri's packing). */
  readonly efficiencyWeight: number;
  /** Leave out pairs in which sharing makes a member miss a deadline it meets alone. */
  readonly deadlineFallback: boolean;
  readonly interference: Interference;
  /** Estimates by pair of profile keys, kept across calls (a scheduler's lifetime). */
  readonly cache?: Map<string, PairEstimate>;
  /** GPU types (indices) with free GPUs now, the only ones a pair may land on; absent = every type. */
  readonly freeTypes?: readonly number[];
}

/** A pair's Eq. 1 efficiency on its best type (of those looked at), and each member's slowdown there. */
export interface PairEstimate {
  readonly efficiency: number;
  readonly type: number;
  readonly slowdown: readonly [number, number];
}

export interface Pair {
  readonly a: number;
  readonly b: number;
  /** Eq. 1 on its best free type. */
  readonly efficiency: number;
}

/** Eq. 11 for two jobs: 1 when deadlines coincide, toward 0 as they drift apart. */
export function deadlineValue(aIn: number, bIn: number): number {
  const lo = Math.max(0, Math.min(aIn, bIn));
  const hi = Math.max(0, Math.max(aIn, bIn));
  if (hi === Number.POSITIVE_INFINITY) return lo === Number.POSITIVE_INFINITY ? 1 : 0;
  return hi > 0 ? lo / hi : 1;
}

/** Algorithm 3: the pairs of a maximum-weight matching on Eq. 12's weights; the rest run alone. */
export function packJobs(candidates: readonly PackCandidate[], options: PackOptions): Pair[] {
  const edges: (WeightedEdge & { efficiency: number })[] = [];
  const cache = options.cache ?? new Map<string, PairEstimate>();
  for (let a = 0; a < candidates.length; a++) {
    for (let b = a + 1; b < candidates.length; b++) {
      const ca = candidates[a] as PackCandidate;
      const cb = candidates[b] as PackCandidate;
      if (ca.width !== cb.width) continue;
      const best = estimatePair(ca, cb, options.interference, cache, options.freeTypes);
      if (!(best.efficiency > 1)) continue;
      if (options.deadlineFallback && missesBySharing(ca, cb, best)) continue;
      const w = options.efficiencyWeight;
      const weight = w * best.efficiency + (1 - w) * deadlineValue(ca.deadlineIn, cb.deadlineIn);
      edges.push({ u: a, v: b, weight, efficiency: best.efficiency });
    }
  }
  const mate = maxWeightMatching(candidates.length, edges);
  return edges.filter((e) => mate[e.u] === e.v).map((e) => ({ a: e.u, b: e.v, efficiency: e.efficiency }));
}

/**
 * The pair on the GPU type where it interleaves best, in its better order (Table 3's Order column):
 * its Eq. 1 efficiency and how much each member slows (group iteration / its own; each member does
 * one iteration per group iteration). Only `types` are looked at (section 3.3.2: the group is assumed
 * to run on a type available now), every type when absent.
 */
export function estimatePair(
  a: PackCandidate,
  b: PackCandidate,
  interference: Interference,
  cache: Map<string, PairEstimate> = new Map(),
  types: readonly number[] = a.stages.map((_, k) => k),
): PairEstimate {
  const pairKey =
    a.profileKey !== undefined && b.profileKey !== undefined
      ? `${a.profileKey}|${b.profileKey}`
      : JSON.stringify([a.stages, b.stages]);
  const key = `${pairKey}@${types.join(',')}`;
  let best = cache.get(key);
  if (best === undefined) {
    best = { efficiency: 0, type: types[0] ?? 0, slowdown: [1, 1] };
    for (const k of types) {
      const sa = a.stages[k] as StageProfile;
      const sb = b.stages[k] as StageProfile;
      const together = Math.min(
        estimateInterleaved([sa, sb], interference).iterationMs,
        estimateInterleaved([sb, sa], interference).iterationMs,
      );
      const ia = isolatedIterationMs(sa);
      const ib = isolatedIterationMs(sb);
      const e = together > 0 ? (ia + ib) / together : 1;
      if (e > best.efficiency) {
        best = {
          efficiency: e,
          type: k,
          slowdown: [together / Math.max(1e-9, ia), together / Math.max(1e-9, ib)],
        };
      }
    }
    cache.set(key, best);
  }
  return best;
}

/** Each member's run time left when the two share GPUs of the pair's estimated type. */
export function sharedSeconds(a: PackCandidate, b: PackCandidate, pair: PairEstimate): [number, number] {
  return [
    (a.secondsAlone[pair.type] as number) * pair.slowdown[0],
    (b.secondsAlone[pair.type] as number) * pair.slowdown[1],
  ];
}

function missesBySharing(a: PackCandidate, b: PackCandidate, pair: PairEstimate): boolean {
  const [ta, tb] = sharedSeconds(a, b, pair);
  const alone = (c: PackCandidate) => (c.secondsAlone[pair.type] as number) <= c.deadlineIn;
  return (alone(a) && ta > a.deadlineIn) || (alone(b) && tb > b.deadlineIn);
}

/**
 * Section 3.3.4 with its GPU weights: a type's weight is how much faster it is than the slowest type
 * (`typeWeights`); while the groups' GPU demand is below the weighted free capacity, the least
 * efficient pair is split into two singles, so fast GPUs are not left idle by packing too tightly.
 * Muri's original (every weight 1) is the homogeneous case.
 */
export function unpackToFill(
  pairs: readonly Pair[],
  candidates: readonly PackCandidate[],
  freeGpus: readonly number[],
  typeWeights: readonly number[],
): Pair[] {
  const capacity = freeGpus.reduce((s, f, k) => s + f * (typeWeights[k] as number), 0);
  const paired = new Set(pairs.flatMap((p) => [p.a, p.b]));
  let demand = pairs.reduce((s, p) => s + (candidates[p.a] as PackCandidate).width, 0);
  candidates.forEach((c, i) => {
    if (!paired.has(i)) demand += c.width;
  });
  const kept = [...pairs].sort((x, y) => y.efficiency - x.efficiency || x.a - y.a);
  while (kept.length > 0 && demand < capacity) {
    const split = kept.pop() as Pair;
    demand += (candidates[split.a] as PackCandidate).width;
  }
  return kept;
}
