/** The simulated cluster's and scheduler's timing, its GPU types, co-location and job attributes. */
import { type ClusterSpec, isHeterogeneous } from '../gpu-types.ts';
import { COLOCATION_INTERFERENCE } from '../truth/hardware.ts';
import { CUCKOO_SLACK, type DeadlineSlack, INTERACTIVE_SECONDS } from '../truth/labels.ts';

export interface EngineConfig {
  readonly gpusPerNode: number;
  /** Scheduling decisions happen every this many simulated seconds (the service's tick). */
  readonly tickSeconds: number;
  /** A requested node is paid at once but takes this long to become ready. */
  readonly bootSeconds: number;
  /** A released node stays paid for this long. */
  readonly releaseLagSeconds: number;
  /** A start, restart or rescale: no progress for this long, GPUs held. */
  readonly rescaleSeconds: number;
  /** Autoscaled mode: the node group's upper bound. */
  readonly maxNodes: number;
  /** A run still unfinished this long after the last arrival stops and reports its incomplete jobs. */
  readonly horizonSeconds: number;
  /**
   * Node pools by GPU type. Fixed mode: exactly these nodes (the policy's budget becomes their GPUs).
   * Autoscaled mode: one g4dn pool only, its node count the upper bound. Unset: t4 nodes as before.
   */
  readonly cluster?: ClusterSpec;
  /** Co-located groups run this much slower than Muri's no-interference round (truth/hardware.ts). */
  readonly colocationInterference: number;
  /** The largest group Decision.colocate may form; 1 forbids co-location. */
  readonly maxGroupSize: number;
  /** Jobs whose isolated runtime at their request is at most this are interactive (truth/labels.ts). */
  readonly interactiveSeconds: number;
  /** Generated deadlines' slack (CUCKOO's Eq. 15); null: no deadline unless the trace gives one. */
  readonly deadlineSlack: DeadlineSlack | null;
}

export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  gpusPerNode: 4,
  tickSeconds: 60,
  bootSeconds: 90,
  releaseLagSeconds: 30,
  rescaleSeconds: 30,
  maxNodes: 500,
  horizonSeconds: 60 * 86_400,
  colocationInterference: COLOCATION_INTERFERENCE,
  maxGroupSize: 2,
  interactiveSeconds: INTERACTIVE_SECONDS,
  deadlineSlack: CUCKOO_SLACK,
};

export class EngineConfigError extends Error {
  override name = 'EngineConfigError';
}

/** Fills in defaults and refuses values the engine cannot run with, naming the field. */
export function resolveEngineConfig(partial: Partial<EngineConfig> = {}): EngineConfig {
  const config = { ...DEFAULT_ENGINE_CONFIG, ...partial };
  const positiveInt = (key: 'gpusPerNode' | 'maxNodes') => {
    if (!Number.isInteger(config[key]) || config[key] < 1) {
      throw new EngineConfigError(`${key} must be a positive integer, got ${config[key]}`);
    }
  };
  positiveInt('gpusPerNode');
  positiveInt('maxNodes');
  if (!(Number.isFinite(config.tickSeconds) && config.tickSeconds > 0)) {
    throw new EngineConfigError(
      `tickSeconds must be a positive number of seconds, got ${config.tickSeconds}`,
    );
  }
  if (!(Number.isFinite(config.horizonSeconds) && config.horizonSeconds > 0)) {
    throw new EngineConfigError(
      `horizonSeconds must be a positive number of seconds, got ${config.horizonSeconds}`,
    );
  }
  if (!Number.isInteger(config.maxGroupSize) || config.maxGroupSize < 1 || config.maxGroupSize > 4) {
    throw new EngineConfigError(`maxGroupSize must be an integer from 1 to 4, got ${config.maxGroupSize}`);
  }
  if (!(Number.isFinite(config.colocationInterference) && config.colocationInterference >= 0)) {
    throw new EngineConfigError(
      `colocationInterference must be a number >= 0, got ${config.colocationInterference}`,
    );
  }
  const slack = config.deadlineSlack;
  if (slack !== null && !(slack.mean > 0 && slack.sd >= 0 && slack.floor > 0)) {
    throw new EngineConfigError(
      `deadlineSlack needs mean > 0, sd >= 0 and floor > 0, got ${JSON.stringify(slack)}`,
    );
  }
  for (const key of ['bootSeconds', 'releaseLagSeconds', 'rescaleSeconds', 'interactiveSeconds'] as const) {
    if (!(Number.isFinite(config[key]) && config[key] >= 0)) {
      throw new EngineConfigError(`${key} must be a number of seconds >= 0, got ${config[key]}`);
    }
  }
  return config;
}

/** The fixed-mode node pools, or refuses a cluster an autoscaled policy cannot rent. */
export function checkClusterForMode(
  config: EngineConfig,
  policy: string,
  mode: 'fixed' | 'autoscaled',
): void {
  const spec = config.cluster;
  if (spec === undefined || mode === 'fixed') return;
  if (isHeterogeneous(spec) || spec[0]?.type !== 't4') {
    throw new EngineConfigError(
      `policy "${policy}" autoscales one g4dn (t4) node group; a cluster of other or mixed GPU types ` +
        `is for the fixed-cluster policies (heterogeneous autoscaling is a later issue)`,
    );
  }
}
