/**
 * One ONES round per tick: update the jobs' limits (caps.ts), run the evolutionary search on widths
 * (search.ts) over the ready GPUs, and place the best candidate with the shared executor: jobs whose
 * width is unchanged stay exactly where they are (a move would cost a 30 s restart), resized jobs are
 * re-placed shrinking ones first, and started ones go best fit. Seeded: the same seed and inputs give
 * the same decisions.
 */
import { executeWidths } from '../../../core/exec/execute.ts';
import { seededUniform } from '../../trace-gen/random.ts';
import type { Allocation, ClusterView, Decision, JobView, PolicyContext } from '../../policy.ts';
import { WidthCaps } from './caps.ts';
import { RemainingTime } from '../common/remaining.ts';
import { EvolutionarySearch, ONES_SEARCH, type SearchSettings } from './search.ts';
import type { SearchJob, SearchProblem } from './sruf.ts';

export class OnesScheduler {
  readonly #caps = new WidthCaps();
  readonly #model: RemainingTime;
  readonly #search: EvolutionarySearch;

  constructor(
    readonly context: PolicyContext,
    settings: SearchSettings = ONES_SEARCH,
  ) {
    this.#model = new RemainingTime(context.profiles.classes, 'listed');
    const uniform = seededUniform(context.seed);
    this.#search = new EvolutionarySearch(() => uniform.next(), settings);
  }

  decide(cluster: ClusterView, views: readonly JobView[]): Decision {
    const jobs = [...views].sort((a, b) => a.arrival - b.arrival || a.id - b.id);
    const ready = cluster.nodes.filter((n) => n.ready);
    const gpus = ready.reduce((sum, n) => sum + n.gpus, 0);
    if (gpus === 0 || jobs.length === 0) return { allocations: new Map() };
    const now = cluster.now;
    this.#caps.update(jobs, now, gpus, (job) => this.#model.peakWidth(job));
    const problem = this.#problem(jobs, now, gpus);
    const { widths } = this.#search.run(problem);

    const out = executeWidths(
      jobs.flatMap((job, i) => {
        const width = widths[i] as number;
        return width > 0 ? [{ id: job.id, width, current: job.allocation }] : [];
      }),
      ready,
      { gpusPerNode: cluster.gpusPerNode, maxNodes: cluster.maxNodes, shortfall: 'partial' },
    );
    for (const job of jobs) {
      if (!sameAllocation(out.allocations.get(job.id) ?? [], job.allocation)) this.#caps.moved(job.id, now);
    }
    return { allocations: out.allocations };
  }

  #problem(jobs: readonly JobView[], now: number, gpus: number): SearchProblem {
    const searchJobs: SearchJob[] = jobs.map((job) => {
      const bounds = this.#caps.bounds(job, now, gpus);
      const remaining = new Float64Array(bounds.hi + 1);
      for (let w = 1; w <= bounds.hi; w++) remaining[w] = this.#model.seconds(job, w);
      return {
        id: job.id,
        bounds,
        current: job.allocation.length,
        fresh: job.rescales === 0,
        processed: job.runSeconds,
        remaining,
      };
    });
    return { jobs: searchJobs, gpus, restartSeconds: this.context.rescaleSeconds };
  }
}

function sameAllocation(a: Allocation, b: Allocation): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
