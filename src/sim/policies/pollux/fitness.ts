/**
 * Pollux's scheduling objective (Qiao et al., OSDI'21, section 4.2, and the AdaptDL simulator's
 * `Problem._evaluate`): FITNESS_p = ((1/J) sum_j x_j^p)^(1/p) over the jobs' speedups x_j, with p = -1
 * (a harmonic mean: a job starved of GPUs drags the whole cluster's fitness down).
 */

/** The power of Pollux's fairness mean; more negative is fairer. */
export const FAIRNESS_POWER = -1;

/** Added to every speedup (as AdaptDL does) so that a job without GPUs has a finite, huge cost. */
export const SPEEDUP_FLOOR = 1e-3;

export class PolluxMathError extends Error {
  override name = 'PolluxMathError';
}

function checkPower(p: number): void {
  if (!Number.isFinite(p)) throw new PolluxMathError(`the power-mean exponent must be finite, got ${p}`);
}

/** ((1/n) sum v^p)^(1/p); p = 0 is the geometric mean. Values must be > 0. */
export function powerMean(values: readonly number[], p: number): number {
  checkPower(p);
  if (values.length === 0) throw new PolluxMathError('a power mean needs at least one value');
  for (const v of values) {
    if (!(v > 0 && Number.isFinite(v))) {
      throw new PolluxMathError(`power-mean values must be positive and finite, got ${v}`);
    }
  }
  const n = values.length;
  if (p === 0) return Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / n);
  return (values.reduce((sum, v) => sum + v ** p, 0) / n) ** (1 / p);
}

/**
 * The per-job term whose sum the optimiser minimises: maximising the power mean is the same as
 * minimising sum x^p for p < 0, -sum log x for p = 0 and -sum x^p for p > 0. Separable by job, which is
 * what lets an exact dynamic programme replace Pollux's genetic search (see optimize.ts).
 */
export function fitnessCost(speedup: number, p: number): number {
  checkPower(p);
  const x = Math.max(speedup, 0) + SPEEDUP_FLOOR;
  if (p < 0) return x ** p;
  if (p === 0) return -Math.log(x);
  return -(x ** p);
}

/** The fitness of the jobs' (penalised) speedups: the power mean of speedup + SPEEDUP_FLOOR. */
export function fitness(speedups: readonly number[], p = FAIRNESS_POWER): number {
  return powerMean(
    speedups.map((s) => Math.max(s, 0) + SPEEDUP_FLOOR),
    p,
  );
}

/**
 * The re-allocation penalty of the AdaptDL simulator: a job whose allocation changes has its speedup
 * multiplied by max(age - restarts * delay, 0) / (age + delay), the share of its life it would have
 * spent making progress had every restart (this one included) cost `delay` seconds. Young jobs and jobs
 * that restarted often are moved reluctantly; old, rarely moved jobs almost freely.
 */
export function restartFactor(ageSeconds: number, restarts: number, delaySeconds: number): number {
  if (!(ageSeconds >= 0 && Number.isFinite(ageSeconds))) {
    throw new PolluxMathError(`a job's age must be a finite number of seconds >= 0, got ${ageSeconds}`);
  }
  if (!(Number.isInteger(restarts) && restarts >= 0)) {
    throw new PolluxMathError(`restarts must be an integer >= 0, got ${restarts}`);
  }
  if (!(delaySeconds >= 0 && Number.isFinite(delaySeconds))) {
    throw new PolluxMathError(`the restart delay must be a number of seconds >= 0, got ${delaySeconds}`);
  }
  if (ageSeconds + delaySeconds === 0) return 1;
  return Math.max(ageSeconds - restarts * delaySeconds, 0) / (ageSeconds + delaySeconds);
}
