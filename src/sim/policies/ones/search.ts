/**
 * ONES's online evolutionary search (Bian et al., SC'21, and its artifact's `ONESScheduler._schedule`):
 * a population of candidate allocations lives across scheduling rounds; each generation refreshes the
 * survivors to the current jobs, breeds population/2 pairs by crossover, mutates each survivor, pads
 * every candidate to a full cluster, and keeps the best `population` by the SRUF objective. ONES's
 * parameters: population 8, crossover probability 0.5, mutation rate 0.1. Bounded here to a few
 * generations per 60 s tick (ONES runs one per ~1 s round), so a tick costs O(generations x population x
 * jobs). The allocation as it is (padded) always joins the population, so the result never scores
 * worse than leaving things alone.
 */
import { clampToBounds, crossover, mutate, pad, type Random, repair } from './operators.ts';
import { compareFitness, evaluate, type Fitness, type SearchProblem, srufOrder } from './sruf.ts';

export interface SearchSettings {
  readonly population: number;
  readonly generations: number;
  /** Probability that crossover swaps a job's width between the parents. */
  readonly crossover: number;
  /** Probability that mutation stops a job (and, separately, that it halves or doubles it). */
  readonly mutation: number;
}

export const ONES_SEARCH: SearchSettings = { population: 8, generations: 3, crossover: 0.5, mutation: 0.1 };

export interface SearchResult {
  readonly widths: Int32Array;
  readonly fitness: Fitness;
  /** The allocation as it is now, padded: the starting point the result is never worse than. */
  readonly baseline: Fitness;
}

interface Candidate {
  readonly widths: Int32Array;
  readonly fitness: Fitness;
}

export class EvolutionarySearch {
  /** Survivors of the last round, as widths by job id (jobs come and go between rounds). */
  #population: Map<number, number>[] = [];

  constructor(
    readonly random: Random,
    readonly settings: SearchSettings = ONES_SEARCH,
  ) {}

  run(problem: SearchProblem): SearchResult {
    const sruf = srufOrder(problem);
    const fresh = problem.jobs.flatMap((job, i) => (job.fresh && job.current === 0 ? [i] : []));
    const finish = (widths: Int32Array): Candidate => {
      repair(problem, widths, sruf);
      pad(problem, widths, sruf, fresh);
      return { widths, fitness: evaluate(problem, widths) };
    };

    const baseline = finish(Int32Array.from(problem.jobs, (job) => job.current));
    let population = [baseline, ...this.#population.map((kept) => finish(this.#refresh(problem, kept)))];
    while (population.length < this.settings.population) {
      population.push(finish(mutate(problem, baseline.widths, this.settings.mutation, this.random)));
    }
    population = select(population, this.settings.population);

    for (let g = 0; g < this.settings.generations; g++) {
      const next = [...population];
      for (let p = 0; p + 1 < population.length; p += 2) {
        const [a, b] = pickTwo(population, this.random);
        for (const child of crossover(a.widths, b.widths, this.settings.crossover, this.random)) {
          next.push(finish(child));
        }
      }
      for (const parent of population) {
        next.push(finish(mutate(problem, parent.widths, this.settings.mutation, this.random)));
      }
      population = select(next, this.settings.population);
    }

    this.#population = population.map(
      (c) => new Map(problem.jobs.map((job, i) => [job.id, c.widths[i] as number])),
    );
    const best = population[0] as Candidate;
    return { widths: best.widths, fitness: best.fitness, baseline: baseline.fitness };
  }

  /** A survivor mapped onto this round's jobs: gone jobs dropped, new ones waiting, bounds enforced. */
  #refresh(problem: SearchProblem, kept: ReadonlyMap<number, number>): Int32Array {
    return Int32Array.from(problem.jobs, (job) => clampToBounds(job, kept.get(job.id) ?? 0));
  }
}

/** The best `size` candidates, distinct, best first (stable: earlier candidates win ties). */
function select(candidates: readonly Candidate[], size: number): Candidate[] {
  const order = candidates.map((c, i) => ({ c, i }));
  order.sort((x, y) => compareFitness(x.c.fitness, y.c.fitness) || x.i - y.i);
  const seen = new Set<string>();
  const out: Candidate[] = [];
  for (const { c } of order) {
    const key = c.widths.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(c);
    if (out.length === size) break;
  }
  return out;
}

function pickTwo(population: readonly Candidate[], random: Random): [Candidate, Candidate] {
  const n = population.length;
  const a = Math.min(n - 1, Math.floor(random() * n));
  let b = Math.min(n - 2, Math.floor(random() * (n - 1)));
  if (b >= a) b++;
  return [population[a] as Candidate, population[b] as Candidate];
}
