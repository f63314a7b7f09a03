/** Executing fixed widths on a cluster of nodes: placement and the desired node count (pure). */
export { type ExecJob, type ExecNode, type ExecOptions, type ExecResult, executeWidths } from './execute.ts';
export {
  everythingFree,
  type FreeGpus,
  gpusPerNodeOf,
  placeBestFit,
  returnGpus,
  takeGpus,
} from './placement.ts';
export { DEFAULT_FILL, type FillCandidate, type FillOptions, fillIdleGpus } from './idle-fill.ts';
