/**
 * Lyra's second stage: the GPUs left after every base demand go to extra workers through a
 * multiple-choice knapsack. Each admitted job picks one option (k extra GPUs, worth its JCT reduction)
 * or none; the total of k stays within the free GPUs. A dynamic programme over (job, GPUs used) is
 * exact in O(jobs x free GPUs x options); Lyra solves the same problem by dynamic programming.
 */

export interface ExtraOption {
  /** Extra GPUs above the job's base (>= 1). */
  readonly extra: number;
  /** Seconds of estimated JCT saved by them (restart costs included by the caller). */
  readonly value: number;
}

export interface ExtraChoice {
  /** Per job: the chosen extra GPUs (0 = none). */
  readonly extras: readonly number[];
  readonly totalValue: number;
}

export class LyraKnapsackError extends Error {
  override name = 'LyraKnapsackError';
}

/**
 * Maximises the summed value of at most one option per job with summed extras <= capacity. A job takes
 * an option only when it strictly adds value (so an option worth nothing is never taken).
 */
export function chooseExtras(jobs: readonly (readonly ExtraOption[])[], capacity: number): ExtraChoice {
  if (!(Number.isInteger(capacity) && capacity >= 0)) {
    throw new LyraKnapsackError(`the free GPUs must be an integer >= 0, got ${capacity}`);
  }
  const useful = jobs.map((options) => usefulOptions(options, capacity));
  const size = capacity + 1;
  // best[g]: the most value of the jobs so far using at most g extra GPUs.
  let best = new Float64Array(size);
  let next = new Float64Array(size);
  // Per (job, g): 1 + the index of the option taken, 0 for none.
  const taken = new Int16Array(Math.max(1, jobs.length * size));
  for (let j = 0; j < useful.length; j++) {
    const options = useful[j] as readonly ExtraOption[];
    for (let g = 0; g < size; g++) {
      let value = best[g] as number;
      let pick = 0;
      for (let o = 0; o < options.length; o++) {
        const option = options[o] as ExtraOption;
        if (option.extra > g) break;
        const candidate = (best[g - option.extra] as number) + option.value;
        if (candidate > value) {
          value = candidate;
          pick = o + 1;
        }
      }
      next[g] = value;
      taken[j * size + g] = pick;
    }
    [best, next] = [next, best];
  }
  const extras = new Array<number>(jobs.length).fill(0);
  let g = capacity;
  for (let j = useful.length - 1; j >= 0; j--) {
    const pick = taken[j * size + g] as number;
    if (pick === 0) continue;
    const option = (useful[j] as readonly ExtraOption[])[pick - 1] as ExtraOption;
    extras[j] = option.extra;
    g -= option.extra;
  }
  return { extras, totalValue: best[capacity] as number };
}

/**
 * Options that fit and are worth more than every narrower one, ascending in extras: the others can
 * never be in a best choice (a narrower option is as good and leaves more GPUs), so dropping them keeps
 * the programme exact and small.
 */
function usefulOptions(options: readonly ExtraOption[], capacity: number): ExtraOption[] {
  for (const o of options) {
    if (!(Number.isInteger(o.extra) && o.extra >= 1) || !Number.isFinite(o.value)) {
      throw new LyraKnapsackError(
        `an option needs a whole number of extra GPUs >= 1 and a finite value, got ${o.extra} / ${o.value}`,
      );
    }
  }
  const sorted = options.filter((o) => o.extra <= capacity).sort((a, b) => a.extra - b.extra);
  const kept: ExtraOption[] = [];
  let bestValue = 0;
  for (const o of sorted) {
    if (o.value > bestValue) {
      kept.push(o);
      bestValue = o.value;
    }
  }
  return kept;
}
