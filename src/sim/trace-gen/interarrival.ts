/**
 * Inter-arrival times with a given mean and squared coefficient of variation (SCV = variance / mean^2),
 * the two-moment fits of queueing practice:
 * - SCV > 1: balanced-means two-phase hyperexponential (each phase carries half the mean);
 * - SCV = 1: exponential (Poisson arrivals);
 * - 0 < SCV < 1: mixture of Erlang(k-1) and Erlang(k) with a common rate, k = ceil(1 / SCV) (Tijms);
 * - SCV = 0: deterministic.
 */
import type { Uniform } from './random.ts';

export type Sampler = () => number;

export function interarrivalSampler(mean: number, scv: number, uniform: Uniform): Sampler {
  if (!(Number.isFinite(mean) && mean > 0))
    throw new RangeError(`the mean gap must be positive, got ${mean}`);
  if (!(Number.isFinite(scv) && scv >= 0)) {
    throw new RangeError(`the squared coefficient of variation must be a number >= 0, got ${scv}`);
  }
  const exp = (rate: number) => -Math.log(uniform.next()) / rate;
  if (scv === 0) return () => mean;
  if (scv > 1) {
    const p1 = (1 + Math.sqrt((scv - 1) / (scv + 1))) / 2;
    const rate1 = (2 * p1) / mean;
    const rate2 = (2 * (1 - p1)) / mean;
    return () => (uniform.next() <= p1 ? exp(rate1) : exp(rate2));
  }
  const k = Math.ceil(1 / scv - 1e-12);
  const p = (k * scv - Math.sqrt(k * (1 + scv) - k * k * scv)) / (1 + scv);
  const rate = (k - p) / mean;
  return () => {
    const phases = uniform.next() <= p ? k - 1 : k;
    let sum = 0;
    for (let i = 0; i < phases; i++) sum += exp(rate);
    return sum;
  };
}
