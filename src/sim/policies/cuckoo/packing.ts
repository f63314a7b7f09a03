/**
 * CUCKOO's job packing (section 3.3.2, Algorithm 3) with its fallback for jobs that should not
 * co-locate and its heterogeneous anti-overpacking (section 3.3.4).
 *
 * Every pair of candidates that may share GPUs is an edge weighted by Eq. 12,
 * total_value = w x eff_value + (1 - w) x ddl_value, where eff_value is Eq. 1 on the GPU type where the
 * pair interleaves best (the paper's rule when several types are free) and ddl_value is Eq. 11,
 * (earliest deadline - now) / (latest deadline - now). A maximum-weight matching (blossom) picks the
 * pairs (each pair's efficiency in its better interleaving order); unmatched jobs run alone. w = 0.6, the paper's setting (its Fig. 12: best in 0.5..0.7).
 *
 * Fallback (the paper's section 5 sends jobs "unsuitable or uncertain for interleaving" to the native
 * scheduler): no edge between two jobs of different widths (Eq. 3), between two jobs that interleave
 * no faster than they run one after the other (eff_value <= 1), or when sharing would make a member
 * miss a deadline it meets alone on that type. Such jobs run alone.
 */
import {
  interleaveEfficiency,
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
}

export interface PackOptions {
  /** Eq. 12's w; 1 = efficiency only (Muri's packing). */
  readonly efficiencyWeight: number;
  /** Leave out pairs in which sharing makes a member miss a deadline it meets alone. */
  readonly deadlineFallback: boolean;
  readonly interference: Interference;
}

export interface Pair {
  readonly a: number;
  readonly b: number;
  /** Eq. 1 on its best type. */
  readonly efficiency: number;
}

/** Eq. 11 for two jobs: 1 when deadlines coincide, toward 0 as they drift apart. */
export function deadlineValue(aIn: number, bIn: number): number {
  const lo = Math.max(0, Math.min(aIn, bIn));
  const hi = Math.max(0, Math.max(aIn, bIn));
  if (hi === Number.POSITIVE_INFINITY) return lo === Number.POSITIVE_INFINITY ? 1 : 0;
  return hi > 0 ? lo / hi : 1;
}

/**
 * Each member's run time left when the two share GPUs of `type`: it does one iteration per group
 * iteration, so it slows by group iteration / its own.
 */
export function sharedSeconds(
  a: PackCandidate,
  b: PackCandidate,
  type: number,
  interference: Interference,
): [number, number] {
  const sa = a.stages[type] as StageProfile;
  const sb = b.stages[type] as StageProfile;
  const together = Math.min(
    estimateInterleaved([sa, sb], interference).iterationMs,
    estimateInterleaved([sb, sa], interference).iterationMs,
  );
  const slow = (s: StageProfile) => together / Math.max(1e-9, isolatedIterationMs(s));
  return [(a.secondsAlone[type] as number) * slow(sa), (b.secondsAlone[type] as number) * slow(sb)];
}

/** Algorithm 3: the pairs of a maximum-weight matching on Eq. 12's weights; the rest run alone. */
export function packJobs(candidates: readonly PackCandidate[], options: PackOptions): Pair[] {
  const edges: (WeightedEdge & { efficiency: number })[] = [];
  const memo = new Map<string, { efficiency: number; type: number }>();
  for (let a = 0; a < candidates.length; a++) {
    for (let b = a + 1; b < candidates.length; b++) {
      const ca = candidates[a] as PackCandidate;
      const cb = candidates[b] as PackCandidate;
      if (ca.width !== cb.width) continue;
      const best = bestType(ca, cb, options.interference, memo);
      if (!(best.efficiency > 1)) continue;
      if (options.deadlineFallback && missesBySharing(ca, cb, best.type, options.interference)) continue;
      const w = options.efficiencyWeight;
      const weight = w * best.efficiency + (1 - w) * deadlineValue(ca.deadlineIn, cb.deadlineIn);
      edges.push({ u: a, v: b, weight, efficiency: best.efficiency });
    }
  }
  const mate = maxWeightMatching(candidates.length, edges);
  return edges.filter((e) => mate[e.u] === e.v).map((e) => ({ a: e.u, b: e.v, efficiency: e.efficiency }));
}

function bestType(
  a: PackCandidate,
  b: PackCandidate,
  interference: Interference,
  memo: Map<string, { efficiency: number; type: number }>,
): { efficiency: number; type: number } {
  const key = JSON.stringify([a.stages, b.stages]);
  let best = memo.get(key);
  if (best === undefined) {
    best = { efficiency: 0, type: 0 };
    for (let k = 0; k < a.stages.length; k++) {
      const sa = a.stages[k] as StageProfile;
      const sb = b.stages[k] as StageProfile;
      // The interleaving order matters (Table 3's Order column): the better of the two.
      const e = Math.max(
        interleaveEfficiency([sa, sb], interference),
        interleaveEfficiency([sb, sa], interference),
      );
      if (e > best.efficiency) best = { efficiency: e, type: k };
    }
    memo.set(key, best);
  }
  return best;
}

function missesBySharing(
  a: PackCandidate,
  b: PackCandidate,
  type: number,
  interference: Interference,
): boolean {
  const [ta, tb] = sharedSeconds(a, b, type, interference);
  const alone = (c: PackCandidate) => (c.secondsAlone[type] as number) <= c.deadlineIn;
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
