/** Plain typed rows of one application's measured traces (see the data README for the meaning). */

export interface PlacementRow {
  /** GPUs per node as a digit string, as written in placements.csv (e.g. "1222"). */
  readonly placement: string;
  readonly localBsz: number;
  readonly stepTime: number;
  readonly syncTime: number;
}

export interface ScalabilityRow {
  readonly numNodes: number;
  readonly numReplicas: number;
  readonly localBsz: number;
  readonly stepTime: number;
  readonly syncTime: number;
}

export interface ValidationRow {
  /** Cumulative statistical progress at the end of this data epoch (iterations at B0). */
  readonly progress: number;
  readonly iteration: number;
  readonly metric: number;
  readonly gradSqr: number;
  readonly gradVar: number;
}

/** One validation-B.csv file: one row per data epoch. */
export interface ValidationTable {
  readonly batchSize: number;
  readonly rows: readonly ValidationRow[];
}

export interface AppTables {
  readonly placements: readonly PlacementRow[];
  readonly scalability: readonly ScalabilityRow[];
  /** Sorted by batch size, ascending. */
  readonly validation: readonly ValidationTable[];
}
