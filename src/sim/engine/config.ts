/** The simulated cluster's and scheduler's timing, with the defaults. */

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
}

export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  gpusPerNode: 4,
  tickSeconds: 60,
  bootSeconds: 90,
  releaseLagSeconds: 30,
  rescaleSeconds: 30,
  maxNodes: 500,
  horizonSeconds: 60 * 86_400,
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
  for (const key of ['bootSeconds', 'releaseLagSeconds', 'rescaleSeconds'] as const) {
    if (!(Number.isFinite(config[key]) && config[key] >= 0)) {
      throw new EngineConfigError(`${key} must be a number of seconds >= 0, got ${config[key]}`);
    }
  }
  return config;
}
