import type { MetricDatum as CloudWatchDatum } from '@aws-sdk/client-cloudwatch';

/**
 * PutMetricData limits (CloudWatch API reference, checked against the SDK's 3.1164 docs): at most 1000
 * metrics per request and 1 MB per HTTP POST request. The client sends JSON (awsJson1_0).
 */
export const MAX_METRICS_PER_REQUEST = 1000;
export const MAX_REQUEST_BYTES = 1_000_000;

/** Room for the envelope around the data (Namespace, brackets, headers are not counted by AWS). */
const ENVELOPE_BYTES = 1_000;

/**
 * Bytes of one datum in the request body, over-estimated: JSON of the datum with its Timestamp as an
 * ISO string (the wire format sends epoch seconds, shorter), plus a separating comma.
 */
export function datumBytes(datum: CloudWatchDatum): number {
  return Buffer.byteLength(JSON.stringify(datum), 'utf8') + 1;
}

export interface BatchLimits {
  readonly maxItems: number;
  readonly maxBytes: number;
}

export const PUT_METRIC_DATA_LIMITS: BatchLimits = {
  maxItems: MAX_METRICS_PER_REQUEST,
  maxBytes: MAX_REQUEST_BYTES - ENVELOPE_BYTES,
};

/**
 * Splits the data, in order, into as few requests as the limits allow: a batch closes when the next
 * datum would exceed either the count or the byte limit. A single datum over the byte limit is an error
 * (CloudWatch would refuse it whatever the batching).
 */
export function batchMetricData(
  data: readonly CloudWatchDatum[],
  limits: BatchLimits = PUT_METRIC_DATA_LIMITS,
): CloudWatchDatum[][] {
  const batches: CloudWatchDatum[][] = [];
  let current: CloudWatchDatum[] = [];
  let bytes = 0;
  for (const datum of data) {
    const size = datumBytes(datum);
    if (size > limits.maxBytes) {
      throw new RangeError(
        `metric ${datum.MetricName} alone is ${size} bytes, over ${limits.maxBytes} per request`,
      );
    }
    if (current.length === limits.maxItems || bytes + size > limits.maxBytes) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(datum);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
