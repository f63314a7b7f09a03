import { Readable } from 'node:stream';
import {
  CloudWatchClient,
  CloudWatchServiceException,
  PutMetricDataCommand,
} from '@aws-sdk/client-cloudwatch';
import { HttpResponse } from '@smithy/core/protocols';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { MAX_REQUEST_BYTES } from '../../src/cloud/aws/cloudwatch-batches.ts';
import { CloudWatchSink } from '../../src/cloud/aws/cloudwatch-sink.ts';
import type { MetricDatum } from '../../src/service/ports.ts';
import { captureLogs, fakeTime, START } from './fake-time.ts';

function mocked(options: { dimensions?: Record<string, string> } = {}) {
  const client = new CloudWatchClient({ region: 'us-east-1' });
  const mock = mockClient(client);
  mock.on(PutMetricDataCommand).resolves({});
  const logs = captureLogs();
  const time = fakeTime();
  const sink = new CloudWatchSink({
    client,
    logger: logs.logger,
    sleep: time.sleep,
    random: () => 0.5,
    ...options,
  });
  const sent = () => mock.commandCalls(PutMetricDataCommand).map((c) => c.args[0].input);
  return { client, mock, logs, time, sink, sent };
}

const gauges = (n: number): MetricDatum[] =>
  Array.from({ length: n }, (_, i) => ({ name: `Gauge${i}`, value: i, unit: i % 2 ? 'Count' : 'Seconds' }));

describe('CloudWatchSink', () => {
  it('publishes in namespace boa, stamped with the given time, units and dimensions attached', async () => {
    const { sink, sent } = mocked({ dimensions: { Cluster: 'boa' } });
    await sink.put(
      [
        { name: 'BudgetGpuHoursPerHour', value: 40, unit: 'None' },
        { name: 'ActualNodes', value: 3, unit: 'Count' },
        { name: 'PredictedAvgJctSeconds', value: 2100, unit: 'Seconds' },
      ],
      START,
    );
    const dims = [{ Name: 'Cluster', Value: 'boa' }];
    expect(sent()).toEqual([
      {
        Namespace: 'boa',
        MetricData: [
          {
            MetricName: 'BudgetGpuHoursPerHour',
            Value: 40,
            Unit: 'None',
            Timestamp: new Date(START),
            Dimensions: dims,
          },
          {
            MetricName: 'ActualNodes',
            Value: 3,
            Unit: 'Count',
            Timestamp: new Date(START),
            Dimensions: dims,
          },
          {
            MetricName: 'PredictedAvgJctSeconds',
            Value: 2100,
            Unit: 'Seconds',
            Timestamp: new Date(START),
            Dimensions: dims,
          },
        ],
      },
    ]);
  });

  it('splits more metrics than one request allows into requests of at most 1000, in order', async () => {
    const { sink, sent } = mocked();
    const metrics = gauges(2500);
    await sink.put(metrics, START);
    const requests = sent();
    expect(requests.map((r) => r.MetricData?.length)).toEqual([1000, 1000, 500]);
    expect(requests.flatMap((r) => r.MetricData?.map((d) => d.MetricName))).toEqual(
      metrics.map((m) => m.name),
    );
  });

  it('keeps every real request body under 1 MB when the data is large (30 long dimensions)', async () => {
    const bodies: string[] = [];
    const client = new CloudWatchClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      // Measure the JSON itself; the SDK would gzip bodies over 10 KB, which CloudWatch also accepts.
      disableRequestCompression: true,
      requestHandler: {
        handle: async (request: { body: string }) => {
          bodies.push(request.body);
          const response = new HttpResponse({ statusCode: 200, headers: {}, body: Readable.from([]) });
          return { response };
        },
      },
    });
    const dimensions = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`Dim${i}`, 'x'.repeat(1024)]),
    );
    await new CloudWatchSink({ client, dimensions, logger: captureLogs().logger }).put(gauges(200), START);
    const sizes = bodies.map((b) => Buffer.byteLength(b));
    expect(sizes.every((s) => s <= MAX_REQUEST_BYTES)).toBe(true);
    // Full batches: each request but the last is within 5% of the limit (so few requests).
    expect(sizes.slice(0, -1).every((s) => s > 0.95 * MAX_REQUEST_BYTES)).toBe(true);
    const sentNames = bodies.flatMap((b) =>
      JSON.parse(b).MetricData.map((d: { MetricName: string }) => d.MetricName),
    );
    expect(sentNames).toEqual(gauges(200).map((m) => m.name));
  });

  it('retries a throttled request and then goes on with the next batch', async () => {
    const { sink, sent, mock, logs, time } = mocked();
    const throttling = new CloudWatchServiceException({
      name: 'Throttling',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
      message: 'Rate exceeded',
    });
    mock.on(PutMetricDataCommand).rejectsOnce(throttling).resolves({});
    await sink.put(gauges(1500), START);
    expect(sent().map((r) => r.MetricData?.length)).toEqual([1000, 1000, 500]);
    expect(logs.lines.filter((l) => l.event === 'aws.retry')).toHaveLength(1);
    expect(time.sleeps).toEqual([375]);
  });

  it('leaves out NaN and infinite values (CloudWatch refuses them) and logs each', async () => {
    const { sink, sent, logs } = mocked();
    await sink.put(
      [
        { name: 'A', value: Number.NaN, unit: 'None' },
        { name: 'B', value: 1, unit: 'None' },
        { name: 'C', value: Number.POSITIVE_INFINITY, unit: 'Seconds' },
      ],
      START,
    );
    expect(sent()[0]?.MetricData?.map((d) => d.MetricName)).toEqual(['B']);
    expect(logs.lines.filter((l) => l.event === 'metrics.dropped').map((l) => l.metric)).toEqual(['A', 'C']);
  });

  it('sends nothing for no metrics', async () => {
    const { sink, sent } = mocked();
    await sink.put([], START);
    expect(sent()).toEqual([]);
  });

  it('refuses bad input with the reason', async () => {
    const { sink, client } = mocked();
    await expect(sink.put(gauges(1), Number.NaN)).rejects.toThrow(
      'metrics time must be ms since the epoch, got NaN',
    );
    await expect(sink.put([{ name: '', value: 1, unit: 'None' }], START)).rejects.toThrow(
      'metric name must be 1 to 255 characters',
    );
    expect(() => new CloudWatchSink({ client, namespace: 'AWS/EKS' })).toThrow('may not start with "AWS/"');
    const many = Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`D${i}`, 'v']));
    expect(() => new CloudWatchSink({ client, dimensions: many })).toThrow(
      'at most 30 CloudWatch dimensions, got 31',
    );
  });
});
