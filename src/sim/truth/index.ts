/** Ground-truth job performance model built from the measured Pollux traces. */
export { APP_NAMES, APP_SPECS, type AppName, type AppSpec, isAppName } from './apps.ts';
export {
  DEFAULT_DERIVE,
  DEFAULT_STAT_EPOCHS,
  DEFAULT_WIDTHS,
  type DerivedEpoch,
  type DeriveOptions,
  deriveClassProfile,
  epochProgress,
  secondsOnWidth,
  splitDataEpochs,
} from './derive.ts';
export {
  type BatchBounds,
  type BatchConfig,
  bestBatchConfig,
  statisticalGain,
  timePerStep,
} from './goodput.ts';
export {
  listTraceApps,
  loadAppTables,
  parsePlacementsCsv,
  parseScalabilityCsv,
  parseValidationCsv,
  TraceError,
  tablesFromCsv,
} from './load.ts';
export { createJobTruth, type JobTruth } from './model.ts';
export { numNodes, numReplicas, type Placement, packedPlacement, placementKey } from './placement.ts';
export { formatProfileJson } from './profile-json.ts';
export { advanceProgress, secondsToProgress } from './progress.ts';
export { buildStatsModel, type GradStats, type StatsModel } from './stats.ts';
export type { AppTables, PlacementRow, ScalabilityRow, ValidationRow, ValidationTable } from './tables.ts';
export { buildThroughputModel, type StepTimes, type ThroughputModel } from './throughput.ts';
