/**
 * Where boa's widths run in the simulator: the fixed-width executor places them, a job keeps GPUs it was
 * given beyond its plan (idle-fill.ts) until another job needs them, and idle GPUs of the nodes in use
 * are filled. Returns the allocations and, per job, the GPUs its plan accounts for and any beyond them.
 */
import { type ExecJob, executeWidths } from '../../../core/exec/execute.ts';
import { type FillOptions, fillIdleGpus } from '../../../core/exec/idle-fill.ts';
import type { ClassProfile } from '../../../core/profile.ts';
import type { ClusterView, JobView } from '../../policy.ts';

export interface PlacedWidths {
  readonly allocations: Map<number, number[]>;
  /** GPUs each placed job holds within its wanted width: what the budget control books as allocated. */
  readonly held: Map<number, number>;
  /** Jobs holding GPUs beyond their wanted width: the width they were given. */
  readonly bonus: Map<number, number>;
}

export function placeWanted(input: {
  readonly wanted: readonly ExecJob[];
  /** The jobs in priority order (FIFO by arrival). */
  readonly ordered: readonly JobView[];
  readonly cluster: ClusterView;
  readonly maxNodes: number;
  readonly fill: FillOptions | null;
  readonly classes: ReadonlyMap<string, ClassProfile>;
  /** Last tick's `bonus`. */
  readonly bonus: ReadonlyMap<number, number>;
}): PlacedWidths {
  const { wanted, ordered, cluster, fill } = input;
  const now = cluster.now;
  const options = {
    gpusPerNode: cluster.gpusPerNode,
    maxNodes: input.maxNodes,
    shortfall: 'partial',
  } as const;
  const keeping = wanted.map((w) => {
    const bonus = input.bonus.get(w.id) ?? 0;
    return bonus > w.width && w.current.length === bonus ? { ...w, width: bonus } : w;
  });
  // Kept extra GPUs give way when a job would otherwise wait or run short, where that places more of
  // the wanted widths (a growing job that cannot get its whole width keeps its old one: taking them
  // back then restarted the kept jobs for nothing, as in the service, src/service/idle-fill-pass.ts).
  let out = executeWidths(keeping, cluster.nodes, options);
  if (keeping.some((w, i) => w !== wanted[i]) && (out.short.length > 0 || out.waiting.length > 0)) {
    const givenBack = executeWidths(wanted, cluster.nodes, options);
    if (shortfall(wanted, givenBack.allocations) < shortfall(wanted, out.allocations)) out = givenBack;
  }
  let allocations: Map<number, number[]> = out.allocations;
  if (fill !== null) {
    const short = new Set(out.short);
    allocations = fillIdleGpus(
      allocations,
      new Map(cluster.nodes.filter((n) => n.ready).map((n) => [n.id, n.gpus])),
      ordered
        .filter((job) => allocations.has(job.id) && !short.has(job.id))
        .map((job) => ({
          id: job.id,
          app: job.app,
          statEpoch: job.statEpoch,
          progressFraction: job.progressFraction,
          restarting: job.restartingUntil !== null && job.restartingUntil > now,
        })),
      input.classes,
      fill,
    );
  }
  const wantedWidths = new Map(wanted.map((w) => [w.id, w.width]));
  const held = new Map<number, number>();
  const bonus = new Map<number, number>();
  for (const [id, allocation] of allocations) {
    const width = wantedWidths.get(id) ?? allocation.length;
    held.set(id, Math.min(width, allocation.length));
    if (allocation.length > width) bonus.set(id, allocation.length);
  }
  return { allocations, held, bonus };
}

/** GPUs of the wanted widths not placed (a waiting job's whole width). */
function shortfall(wanted: readonly ExecJob[], allocations: ReadonlyMap<number, readonly number[]>): number {
  let short = 0;
  for (const w of wanted) short += Math.max(0, w.width - (allocations.get(w.id)?.length ?? 0));
  return short;
}
