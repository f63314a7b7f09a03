/**
 * What the incremental placement (placement.ts) takes and gives: the jobs and bounds of a pass, and its
 * result. Apart so the shapes callers build and read are found without the pass's workings; placement.ts
 * exports them too, where its callers import them from.
 */

export interface PlacementJob {
  readonly id: number;
  /** The job's current allocation (node id per GPU), as the service holds it. */
  readonly allocation: readonly string[];
}

export interface PlacementBounds {
  readonly gpusPerNode: number;
  readonly minNodes: number;
  readonly maxNodes: number;
}

export interface Placement {
  /** Only the jobs whose allocation changes, with their new one as node ids (empty: the job waits). */
  readonly changed: Map<number, readonly string[]>;
  readonly wantedGpus: number;
  readonly allocatedGpus: number;
  readonly desiredNodes: number;
}
