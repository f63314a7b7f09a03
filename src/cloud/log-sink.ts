import type { Logger } from 'pino';
import type { MetricDatum, MetricsSink } from '../service/ports.ts';

/**
 * Metrics as one structured log line per batch (the local default, where there is no CloudWatch):
 * `{"event":"metrics","at":"2026-…Z","metrics":{"budget":40,…},"units":{"budget":"None",…}}`.
 * Values are logged as given, NaN and Infinity included (as null, per JSON), since a log loses nothing
 * by showing them.
 */
export class LogMetricsSink implements MetricsSink {
  private readonly logger: Logger;

  constructor(logger: Logger, namespace = 'boa') {
    this.logger = logger.child({ component: 'metrics', namespace });
  }

  async put(metrics: readonly MetricDatum[], at: number): Promise<void> {
    if (!Number.isFinite(at)) throw new RangeError(`metrics time must be ms since the epoch, got ${at}`);
    if (metrics.length === 0) return;
    const values: Record<string, number> = {};
    const units: Record<string, MetricDatum['unit']> = {};
    for (const m of metrics) {
      values[m.name] = m.value;
      units[m.name] = m.unit;
    }
    // Every tick writes one: at debug, so a terminal shows what happens, not a heartbeat a minute.
    this.logger.debug(
      { event: 'metrics', at: new Date(at).toISOString(), metrics: values, units },
      'metrics',
    );
  }
}
