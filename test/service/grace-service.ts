/**
 * The service over a GraceExecutor (test/helpers/grace-executor.ts): replicas that stop for their whole
 * grace unless the test ends them, on a local pool of `maxNodes` nodes booting at once, with a budget of
 * 30 and a plan in force. Shared by the tests of GPUs that stopping replicas hold.
 */
import { expect } from 'vitest';
import { GraceExecutor } from '../helpers/grace-executor.ts';
import { type ManualClock, startService } from './harness.ts';

export const GRACE_MS = 120_000;

export async function graceService(
  cleanups: Array<() => Promise<void>>,
  opts: {
    maxNodes: number;
    priorRates?: Record<string, number>;
    restart?: { dataDir: string; executor: GraceExecutor; clock: ManualClock };
  },
) {
  const { maxNodes, restart } = opts;
  let clockNow = () => 0;
  const executor = restart?.executor ?? new GraceExecutor(() => clockNow(), GRACE_MS);
  const s = await startService({
    executor,
    ...(restart ? { dataDir: restart.dataDir, clock: restart.clock } : {}),
    config: {
      priorRates: opts.priorRates ?? { bert: 1 },
      local: { maxNodes, bootSeconds: 0, releaseSeconds: 0 },
      terminationGraceSeconds: GRACE_MS / 1000,
    },
  });
  clockNow = () => s.clock.now();
  executor.now = clockNow;
  cleanups.push(s.close);
  expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
  await s.service.planner.idle();
  /** One tick after the clock moved on, and the executor's pass it asks for. */
  const tick = async () => {
    s.clock.advance(30);
    await s.ticks(1);
    s.service.execution.reconcile();
    await s.service.execution.settle();
  };
  const submit = async (cls = 'bert') => {
    const res = await s.request('POST', '/v1/jobs', { class: cls, workload: { command: ['sleep', '600'] } });
    expect(res.status).toBe(201);
    return res.body.id as number;
  };
  const view = async (id: number) => (await s.request('GET', `/v1/jobs/${id}`)).body;
  /** Ticks until every job is running with its replicas out, at most a few ticks (nodes boot). */
  const running = async (ids: number[]) => {
    for (let i = 0; i < 6 && !ids.every((id) => executor.nodesOf(id).length > 0); i++) await tick();
    for (const id of ids) expect(s.service.job(id).state).toBe('running');
  };
  return { s, executor, tick, submit, view, running };
}
