import {
  type CloudWatchClient,
  type Dimension,
  type MetricDatum as CloudWatchDatum,
  PutMetricDataCommand,
  type StandardUnit,
} from '@aws-sdk/client-cloudwatch';
import { pino, type Logger } from 'pino';
import type { MetricDatum, MetricsSink } from '../../service/ports.ts';
import { DEFAULT_RETRY, type RetryContext, type RetryPolicy } from '../retry.ts';
import { withRetry } from './retry.ts';
import { realSleep, type Sleep } from '../time.ts';
import { type BatchLimits, batchMetricData, PUT_METRIC_DATA_LIMITS } from './cloudwatch-batches.ts';

export interface CloudWatchSinkOptions {
  readonly client: CloudWatchClient;
  /** Default 'boa'. */
  readonly namespace?: string;
  /** Added to every metric, e.g. { Cluster: 'boa' } (at most 30, CloudWatch's limit). */
  readonly dimensions?: Readonly<Record<string, string>>;
  readonly logger?: Logger;
  readonly sleep?: Sleep;
  readonly random?: () => number;
  readonly retry?: RetryPolicy;
  readonly limits?: BatchLimits;
}

/** The port's units by name; spelled out so a unit added to the port fails to compile here. */
const UNITS: Record<MetricDatum['unit'], StandardUnit> = { Count: 'Count', Seconds: 'Seconds', None: 'None' };

const MAX_DIMENSIONS = 30;
const MAX_NAME_LENGTH = 255;
const MAX_DIMENSION_VALUE_LENGTH = 1024;

function checkName(what: string, name: string, max = MAX_NAME_LENGTH): void {
  if (name.length === 0 || name.length > max) {
    throw new RangeError(`${what} must be 1 to ${max} characters, got ${JSON.stringify(name.slice(0, 40))}`);
  }
}

/**
 * Publishes the service's gauges (budget, paid and allocated GPU-hours, nodes, jobs, predicted JCT) to
 * CloudWatch with PutMetricData, every datum stamped with the batch's time, split into as few requests as
 * the API's limits allow, each retried on throttling. CloudWatch refuses NaN and infinities, so such
 * values are left out and logged rather than failing the rest.
 * PutMetricData has no idempotency token: a request retried after a timeout that CloudWatch had stored
 * stores the batch twice. Harmless as read: every alarm, the dashboard and the guard Lambda read boa's
 * metrics by Average, Minimum, Maximum or SampleCount as presence, never by Sum
 * (test/infra/duplicate-datapoints.test.ts).
 */
export class CloudWatchSink implements MetricsSink {
  readonly namespace: string;
  private readonly dimensions: Dimension[];
  private readonly ctx: RetryContext;

  constructor(private readonly options: CloudWatchSinkOptions) {
    this.namespace = options.namespace ?? 'boa';
    checkName('CloudWatch namespace', this.namespace);
    if (this.namespace.startsWith('AWS/'))
      throw new RangeError('CloudWatch namespace may not start with "AWS/"');
    const entries = Object.entries(options.dimensions ?? {});
    if (entries.length > MAX_DIMENSIONS) {
      throw new RangeError(`at most ${MAX_DIMENSIONS} CloudWatch dimensions, got ${entries.length}`);
    }
    for (const [name, value] of entries) {
      checkName('CloudWatch dimension name', name);
      checkName(`CloudWatch dimension ${name}'s value`, value, MAX_DIMENSION_VALUE_LENGTH);
    }
    this.dimensions = entries.map(([Name, Value]) => ({ Name, Value }));
    const logger = (options.logger ?? pino()).child({
      component: 'cloudwatch-sink',
      namespace: this.namespace,
    });
    this.ctx = {
      sleep: options.sleep ?? realSleep,
      random: options.random ?? Math.random,
      logger,
      policy: options.retry ?? DEFAULT_RETRY,
    };
  }

  async put(metrics: readonly MetricDatum[], at: number): Promise<void> {
    if (!Number.isFinite(at)) throw new RangeError(`metrics time must be ms since the epoch, got ${at}`);
    const timestamp = new Date(at);
    const data: CloudWatchDatum[] = [];
    for (const m of metrics) {
      checkName('metric name', m.name);
      if (!Number.isFinite(m.value)) {
        this.ctx.logger.warn(
          { event: 'metrics.dropped', metric: m.name, value: String(m.value) },
          'not finite',
        );
        continue;
      }
      data.push({
        MetricName: m.name,
        Value: m.value,
        Unit: UNITS[m.unit],
        Timestamp: timestamp,
        ...(this.dimensions.length ? { Dimensions: this.dimensions } : {}),
      });
    }
    const batches = batchMetricData(data, this.options.limits ?? PUT_METRIC_DATA_LIMITS);
    for (const [index, batch] of batches.entries()) {
      await withRetry(
        'PutMetricData',
        () =>
          this.options.client.send(
            new PutMetricDataCommand({ Namespace: this.namespace, MetricData: batch }),
          ),
        this.ctx,
      );
      this.ctx.logger.debug({
        event: 'metrics.published',
        batch: index + 1,
        of: batches.length,
        count: batch.length,
      });
    }
  }
}
