import { CloudWatch, GetMetricStatisticsCommand, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { mockClient } from 'aws-sdk-client-mock';

type Statistic = 'SampleCount' | 'Minimum' | 'Maximum' | 'Average';

/**
 * A CloudWatch that answers GetMetricStatistics from what was published, in buckets of the asked Period
 * from StartTime rounded down to the minute (`start`), or on whole multiples of the Period (`epoch`):
 * which of the two AWS does is not documented, so tests of what the budget guard reads run both. A point
 * becomes readable `readableAfterMs` after it was sent (CloudWatch's delay, longest as an outage ends).
 */
export function fakeCloudWatch(align: 'start' | 'epoch', readableAfterMs = 0) {
  const cloudwatch = new CloudWatch({ region: 'us-east-1' });
  const mock = mockClient(cloudwatch);
  const points: Array<{ name: string; at: number; value: number; sentAt: number }> = [];
  mock.on(GetMetricStatisticsCommand).callsFake((input) => {
    const start = Math.floor(input.StartTime.getTime() / 60_000) * 60_000;
    const end = input.EndTime.getTime();
    const period = input.Period * 1000;
    const buckets = new Map<number, number[]>();
    for (const p of points) {
      if (p.name !== input.MetricName || p.at < start || p.at >= end || p.sentAt + readableAfterMs > end)
        continue;
      const bucket =
        align === 'start'
          ? start + Math.floor((p.at - start) / period) * period
          : Math.floor(p.at / period) * period;
      buckets.set(bucket, [...(buckets.get(bucket) ?? []), p.value]);
    }
    const statistic = input.Statistics[0] as Statistic;
    const of = (values: number[]) =>
      statistic === 'SampleCount'
        ? values.length
        : statistic === 'Minimum'
          ? Math.min(...values)
          : statistic === 'Maximum'
            ? Math.max(...values)
            : values.reduce((a, b) => a + b, 0) / values.length;
    return {
      Datapoints: [...buckets].map(([bucket, values]) => ({
        Timestamp: new Date(bucket),
        [statistic]: of(values),
      })),
    };
  });
  mock.on(PutMetricDataCommand).resolves({});
  return {
    cloudwatch,
    /** What boa's PutMetricData carries at `at`, sent (and so delayed) from `sentAt`. */
    publish(name: string, at: number, value: number, sentAt = at): void {
      points.push({ name, at, value, sentAt });
    },
  };
}
