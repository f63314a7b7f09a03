/**
 * CUCKOO's interleaving estimator (its Algorithms 1 and 2, section 3.2): the iteration time of a group
 * of jobs whose iterations are interleaved stage by stage on the same GPUs.
 *
 * An iteration has three main-thread stages: data loading (S), GPU execution (F then B launched) and
 * communication (C). With n jobs the group cycles through 3 + n - 1 stages; the k-th job of the group
 * starts its loading stage k stages after the first, so at any stage the jobs are in different phases
 * (Muri's staggering). GPU and network work is asynchronous: it runs on from the stage that launched
 * it and what does not fit in a stage carries over to the next (Alg. 2's NextStage). A stage lasts
 * R_i = the longest of what must finish inside it (Alg. 2's sync): a loading job's S, a GPU-stage
 * job's forward pass, a communication-stage job's gradient synchronisation (its backward and C, which
 * overlap, as gradient buckets are sent while backward runs). When two or more jobs use the GPU (or
 * the network) in the same stage, their work on it in that stage is stretched by the interference
 * coefficient (Alg. 2's resourceCompetition; the paper's example uses 2 for two jobs, i.e. each gets
 * half the resource; k users stretch by coefficient x k / 2). Stages are simulated until the sum of the last cycle
 * equals the one before (Alg. 1's isCloseToLastIteration) and that sum is the group's iteration time.
 * The paper's Table 3/4 example (ResNet and BERT, coefficients 2) gives R = 10, 72, 363, 98, 10, 72
 * and 543 ms; test/sim/policies/cuckoo/interleave.test.ts checks it.
 */

export interface StageProfile {
  /** Data loading on the main thread, ms (0 where not profiled). */
  readonly loadMs: number;
  readonly forwardMs: number;
  readonly backwardMs: number;
  readonly commMs: number;
}

export interface Interference {
  /** Stretch of GPU work when two or more jobs compute in the same stage (the paper's example: 2). */
  readonly gpu: number;
  /** Stretch of network work when two or more jobs communicate in the same stage. */
  readonly comm: number;
}

/**
 * Our default: two jobs on one GPU (or link) each get half of it, and the engine's co-location model
 * adds 20% interference on top: 2 x 1.2. (With k users the stretch is coefficient x k / 2.)
 */
export const DEFAULT_INTERFERENCE: Interference = { gpu: 2.4, comm: 2.4 };

export class InterleaveError extends Error {
  override name = 'InterleaveError';
}

export interface InterleaveEstimate {
  /** One iteration of the whole group (every member does one), ms. */
  readonly iterationMs: number;
  /** The stage durations simulated, ms (R_0, R_1, ...). */
  readonly stagesMs: readonly number[];
}

const MAX_CYCLES = 64;
const CLOSE = 1e-6;

/** The group's iteration time when `jobs` (in their interleaving order) share the same GPUs. */
export function estimateInterleaved(
  jobs: readonly StageProfile[],
  interference: Interference = DEFAULT_INTERFERENCE,
): InterleaveEstimate {
  if (jobs.length === 0) throw new InterleaveError('a group needs at least one job');
  for (const [j, p] of jobs.entries()) {
    for (const [k, v] of Object.entries(p)) {
      if (!(Number.isFinite(v) && v >= 0)) {
        throw new InterleaveError(`job ${j}: ${k} must be a finite number >= 0 ms, got ${v}`);
      }
    }
  }
  if (!(interference.gpu >= 1 && interference.comm >= 1)) {
    throw new InterleaveError(
      `interference coefficients must be >= 1, got gpu ${interference.gpu}, comm ${interference.comm}`,
    );
  }
  const n = jobs.length;
  const cycle = 3 + n - 1;
  // Work launched and not yet done, in isolated ms.
  const fwd = new Float64Array(n);
  const bwd = new Float64Array(n);
  const net = new Float64Array(n);
  const stages: number[] = [];
  for (let i = 0; i < cycle * MAX_CYCLES; i++) {
    const phase = jobs.map((_, j) => (i - j) % cycle);
    let r = 0;
    jobs.forEach((p, j) => {
      if (phase[j] === 0) r = Math.max(r, p.loadMs);
      if (phase[j] === 1) {
        fwd[j] = (fwd[j] as number) + p.forwardMs;
        bwd[j] = (bwd[j] as number) + p.backwardMs;
      }
      if (phase[j] === 2) net[j] = (net[j] as number) + p.commMs;
    });
    const gpuUsers = jobs.filter((_, j) => (fwd[j] as number) + (bwd[j] as number) > 0).length;
    const netUsers = jobs.filter((_, j) => (net[j] as number) > 0).length;
    const g = gpuUsers >= 2 ? (interference.gpu * gpuUsers) / 2 : 1;
    const c = netUsers >= 2 ? (interference.comm * netUsers) / 2 : 1;
    jobs.forEach((_, j) => {
      if (phase[j] === 1) r = Math.max(r, g * (fwd[j] as number));
      if (phase[j] === 2) {
        r = Math.max(r, g * ((fwd[j] as number) + (bwd[j] as number)), c * (net[j] as number));
      }
    });
    // Each job's GPU work runs forward then backward from the stage's start; the rest carries over.
    jobs.forEach((_, j) => {
      const f = g * (fwd[j] as number);
      const doneF = Math.min(f, r);
      fwd[j] = (f - doneF) / g;
      bwd[j] = Math.max(0, g * (bwd[j] as number) - (r - doneF)) / g;
      net[j] = Math.max(0, c * (net[j] as number) - r) / c;
    });
    stages.push(r);
    if (stages.length >= 2 * cycle) {
      const last = sum(stages, stages.length - cycle, stages.length);
      const before = sum(stages, stages.length - 2 * cycle, stages.length - cycle);
      if (Math.abs(last - before) <= CLOSE * Math.max(1, last)) {
        return { iterationMs: last, stagesMs: stages };
      }
    }
  }
  // Not settled (work piling up faster than a cycle clears it cannot happen with finite inputs, but a
  // slow drift can): the last cycle is the estimate.
  return { iterationMs: sum(stages, stages.length - cycle, stages.length), stagesMs: stages };
}

/** One job alone: the same stages with nobody to interleave with. */
export function isolatedIterationMs(job: StageProfile): number {
  return estimateInterleaved([job]).iterationMs;
}

/**
 * Eq. 1: eff_value = sum of the members' isolated iteration times / the group's interleaved iteration
 * time. Above 1 the group does more per second than its members one after another.
 */
export function interleaveEfficiency(
  jobs: readonly StageProfile[],
  interference: Interference = DEFAULT_INTERFERENCE,
): number {
  const together = estimateInterleaved(jobs, interference).iterationMs;
  const alone = jobs.reduce((s, p) => s + isolatedIterationMs(p), 0);
  return together > 0 ? alone / together : 1;
}

function sum(xs: readonly number[], from: number, to: number): number {
  let s = 0;
  for (let i = from; i < to; i++) s += xs[i] as number;
  return s;
}
