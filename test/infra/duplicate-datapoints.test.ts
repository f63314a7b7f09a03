import { describe, expect, it } from 'vitest';
import { synthTemplate } from './synth.ts';

/**
 * A PutMetricData that times out after CloudWatch stored it is sent again (src/cloud/aws/cloudwatch-sink.ts),
 * so a tick's gauges may be stored twice. Every statistic read of boa's own metrics must be one a
 * duplicate leaves unchanged: Average, Minimum, Maximum, or SampleCount read as "any at all" (the
 * heartbeat). A Sum would count the tick twice.
 */
const DUPLICATE_SAFE = ['Average', 'Minimum', 'Maximum', 'SampleCount'];

describe("the CDK app's reads of boa's metrics", () => {
  const template = synthTemplate();

  it('alarm only on statistics a datum stored twice leaves unchanged', () => {
    const reads: { metric: string; stat: string }[] = [];
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      const p = alarm.Properties;
      if (p.Namespace === 'boa') reads.push({ metric: p.MetricName, stat: p.Statistic });
      for (const query of p.Metrics ?? []) {
        const stat = query.MetricStat;
        if (stat?.Metric?.Namespace === 'boa')
          reads.push({ metric: stat.Metric.MetricName, stat: stat.Stat });
      }
    }
    // The heartbeat, paid, the window's budget, the budget and the guard's trip: all read somewhere.
    expect(reads.map((r) => r.metric).sort()).toEqual(
      [
        'BudgetGpuHoursPerHour',
        'GuardTripped',
        'Heartbeat',
        'PaidGpuHoursPerHourAverage',
        'WindowBudgetGpuHoursPerHour',
      ].sort(),
    );
    for (const read of reads) expect(DUPLICATE_SAFE, read.metric).toContain(read.stat);
    // SampleCount is read only as presence: the silence alarm breaches below 1 beat, not on a count.
    const heartbeat = Object.values(template.findResources('AWS::CloudWatch::Alarm')).find(
      (a) => a.Properties.MetricName === 'Heartbeat',
    )!;
    expect(heartbeat.Properties).toMatchObject({
      Statistic: 'SampleCount',
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
    });
  });

  it('graph them on the dashboard with the same statistics (a widget with none shows the Average)', () => {
    const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard!.Properties.DashboardBody);
    const stats = [...body.matchAll(/\\"stat\\":\\"(\w+)\\"/g)].map((m) => m[1]);
    expect(stats.length).toBeGreaterThan(0);
    for (const stat of stats) expect(DUPLICATE_SAFE).toContain(stat);
  });
});
