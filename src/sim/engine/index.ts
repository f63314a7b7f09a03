/** The trace-driven simulator's backbone: event loop, virtual clock, cluster and billing, metrics. */
export { VirtualClock } from './clock.ts';
export { type NodeRecord, SimCluster } from './cluster.ts';
export {
  DEFAULT_ENGINE_CONFIG,
  type EngineConfig,
  EngineConfigError,
  resolveEngineConfig,
} from './config.ts';
export {
  runSimulation,
  SimulationError,
  type SimulationInput,
  type SimulationRun,
  type TickSnapshot,
} from './engine.ts';
export { type JobClass, SimJob } from './job.ts';
export { type JobRecord, percentile, type RunMetrics, summarize } from './metrics.ts';
export { type DecisionContext, PolicyViolationError, validateDecision } from './validate.ts';
