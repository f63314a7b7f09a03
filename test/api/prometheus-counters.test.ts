/**
 * What went wrong, as Prometheus counters (found in an SRE trial): /metrics had gauges only, so a
 * failing tick, a node pool not answering, CloudWatch refusing the heartbeat or a job restarting over
 * and over was in the log alone, nothing to alert or graph on.
 */
import { afterEach, expect, it } from 'vitest';
import { failGeneration } from '../../src/service/replica-exits.ts';
import { startService } from '../service/harness.ts';

const closes: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closes.splice(0)) await close();
});

/** The sample of a metric without labels, and its TYPE line's type. */
function read(text: string, name: string): { type: string | undefined; value: number | undefined } {
  const type = new RegExp(`^# TYPE ${name} (\\w+)$`, 'm').exec(text)?.[1];
  const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
  return { type, value: value === undefined ? undefined : Number(value) };
}

it('counts failed ticks, node pool failures, undelivered metrics and job restarts', async () => {
  const boa = await startService({ config: { tickSeconds: 60, budget: 40 } });
  closes.push(boa.close);
  await boa.service.planner.idle();
  await boa.ticks(1);
  const names = [
    'boa_tick_failures_total',
    'boa_node_pool_failures_total',
    'boa_metrics_publish_failures_total',
    'boa_job_restarts_total',
  ];
  const before = (await boa.request('GET', '/metrics')).body as string;
  for (const name of names) expect(read(before, name), name).toEqual({ type: 'counter', value: 0 });

  // A tick whose store write fails, twice.
  const setLastTick = boa.repo.setLastTick.bind(boa.repo);
  boa.repo.setLastTick = () => {
    throw new Error('SQLITE_READONLY: attempt to write a readonly database');
  };
  for (let i = 0; i < 2; i++) await expect(boa.scheduler.tick()).rejects.toThrow('SQLITE_READONLY');
  boa.repo.setLastTick = setLastTick;

  // The pool not answering: the tick goes on with the nodes it last saw, and counts the failure.
  const listNodes = boa.pool.listNodes.bind(boa.pool);
  boa.pool.listNodes = async () => {
    throw new Error('ThrottlingException: Rate exceeded');
  };
  await boa.ticks(1);
  boa.pool.listNodes = listNodes;

  // CloudWatch refusing the tick's batch.
  boa.service.deps.metrics.put = async () => {
    throw new Error('AccessDenied: cloudwatch:PutMetricData');
  };
  await boa.ticks(1);
  await new Promise((resolve) => setImmediate(resolve));

  // A job's run failing, restarted after its backoff.
  const { job } = boa.service.registerJob('cifar10', 'a');
  failGeneration(boa.service, job, {
    jobId: job.id,
    generation: job.generation,
    rank: 0,
    node: 'local-1',
    phase: 'failed',
    exitCode: 3,
    reason: 'exited 3',
  });
  expect(job.restarts).toBe(1);

  const after = (await boa.request('GET', '/metrics')).body as string;
  expect(read(after, 'boa_tick_failures_total').value).toBe(2);
  expect(read(after, 'boa_node_pool_failures_total').value).toBe(1);
  expect(read(after, 'boa_metrics_publish_failures_total').value).toBe(1);
  expect(read(after, 'boa_job_restarts_total').value).toBe(1);
});
