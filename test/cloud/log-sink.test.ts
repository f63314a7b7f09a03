import { describe, expect, it } from 'vitest';
import { LogMetricsSink } from '../../src/cloud/log-sink.ts';
import { captureLogs, START } from './fake-time.ts';

describe('LogMetricsSink', () => {
  it('logs one structured line per batch: values and units by metric name, the time as ISO', async () => {
    const logs = captureLogs();
    await new LogMetricsSink(logs.logger).put(
      [
        { name: 'BudgetGpuHoursPerHour', value: 40, unit: 'None' },
        { name: 'JobsWaiting', value: 2, unit: 'Count' },
      ],
      START,
    );
    expect(logs.lines).toHaveLength(1);
    expect(logs.lines[0]).toMatchObject({
      level: 20, // debug: one per tick
      event: 'metrics',
      namespace: 'boa',
      at: '2026-01-01T00:00:00.000Z',
      metrics: { BudgetGpuHoursPerHour: 40, JobsWaiting: 2 },
      units: { BudgetGpuHoursPerHour: 'None', JobsWaiting: 'Count' },
    });
  });

  it('logs nothing for no metrics and refuses a time that is not a number', async () => {
    const logs = captureLogs();
    const sink = new LogMetricsSink(logs.logger);
    await sink.put([], START);
    expect(logs.lines).toEqual([]);
    await expect(sink.put([], Number.NaN)).rejects.toThrow(
      'metrics time must be ms since the epoch, got NaN',
    );
  });
});
