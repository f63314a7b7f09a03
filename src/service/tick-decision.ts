/** What a scheduling tick decides (scheduler.ts decide) and what it reports once it is done. */
import type { ServiceJob } from './jobs.ts';

export interface TickDecision {
  readonly changed: ServiceJob[];
  readonly wantedGpus: number;
  readonly allocatedGpus: number;
  readonly desiredNodes: number;
  /** GPUs the drain adds to the plan's widths (expected, so the demand ratio does not narrow for them). */
  readonly drainExtraGpus: number;
  /** A job was started or resized on fewer GPUs than its width: the ready nodes had no more. */
  readonly placedShort: boolean;
}

export interface TickReport extends TickDecision {
  readonly at: number;
  /** The decision alone: widths, placement, node count. */
  readonly decideMs: number;
  /** The decision and its store transaction (no cloud calls). */
  readonly computeMs: number;
  readonly nodes: number;
  readonly readyNodes: number;
}
