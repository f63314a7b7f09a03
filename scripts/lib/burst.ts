/**
 * A burst of submissions against a budget, on the embedded default (local node pool, default config)
 * with short ticks and boot: every job is registered through the API at once, then the service ticks.
 * Running jobs finish after `runTicks` ticks, so the queue drains. Shared by bench:burst and its test.
 */
import { pino } from 'pino';
import { bootService } from '../../src/service/boot.ts';
import { InlinePlanComputer } from '../../src/service/calculator/computer.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { paidGpusNow } from '../../src/service/paid-now.ts';

export interface BurstOptions {
  readonly jobs: number;
  readonly budget: number;
  readonly ticks: number;
  readonly classes: readonly string[];
  /** Ticks a job runs before it reports done. */
  readonly runTicks: number;
}

export interface BurstTick {
  readonly tick: number;
  readonly paidGpus: number;
  /** The paid GPUs the budget window allowed at this tick (before it). */
  readonly ceilingGpus: number;
  readonly running: number;
  readonly queuedForBudget: number;
  readonly done: number;
}

export async function runBurst(options: BurstOptions) {
  let t = Date.UTC(2026, 0, 1);
  const clock = { now: () => t };
  const config = resolveConfig({
    dataDir: ':memory:',
    token: 'burst-token-0123456789',
    tickSeconds: 1,
    local: { maxNodes: 64, bootSeconds: 1, releaseSeconds: 1 },
    logLevel: 'silent',
  });
  const boa = await bootService(config, {
    clock,
    computer: new InlinePlanComputer(),
    logger: pino({ level: 'silent' }),
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await boa.app.request(path, {
      method,
      headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- API JSON, read by field in the bench and its test
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  try {
    const started = performance.now();
    const budgetSet = await call('PUT', '/v1/budget', { gpuHoursPerHour: options.budget });
    await boa.service.planner.idle();
    for (let i = 0; i < options.jobs; i++) {
      const registered = await call('POST', '/v1/jobs', {
        class: options.classes[i % options.classes.length],
        name: `burst-${i}`,
      });
      if (registered.status !== 201 && registered.status !== 200)
        throw new Error(`registering job ${i}: ${registered.status} ${JSON.stringify(registered.body)}`);
    }
    await boa.service.planner.idle();
    const ranFor = new Map<number, number>();
    const ticks: BurstTick[] = [];
    let done = 0;
    const everRan = new Set<number>();
    for (let tick = 0; tick < options.ticks; tick++) {
      const ceiling = boa.service.spendCeiling(t);
      await boa.scheduler.tick();
      await boa.service.planner.idle();
      await boa.scheduler.settle();
      const jobs = [...boa.service.state.jobs.values()];
      for (const job of jobs.filter((j) => j.state === 'running')) {
        everRan.add(job.id);
        const ran = (ranFor.get(job.id) ?? 0) + 1;
        ranFor.set(job.id, ran);
        if (ran >= options.runTicks) {
          boa.service.finishJob(job.id, 'done');
          done++;
        }
      }
      // What the pool holds once the tick has resized it: the tick's own listing is from before, so
      // the nodes a tick launched showed up a tick late and the last tick's never.
      const paidGpus = paidGpusNow(await boa.service.deps.pool.listNodes());
      ticks.push({
        tick,
        paidGpus,
        ceilingGpus: ceiling?.gpus ?? Number.POSITIVE_INFINITY,
        running: jobs.filter((j) => j.state === 'running').length,
        queuedForBudget: jobs.filter((j) => j.state === 'waiting' && j.queuedForBudget).length,
        done,
      });
      t += config.tickSeconds * 1000;
    }
    const status = await call('GET', '/v1/status');
    const budgetView = await call('GET', '/v1/budget');
    const window = boa.service.ledgerAverages(Date.UTC(2026, 0, 1), t);
    return {
      budgetSetStatus: budgetSet.status,
      budgetWarning: budgetSet.body.warning as string | null,
      minFeasibleBudget: budgetSet.body.minFeasibleBudget as number,
      ticks,
      jobsThatRan: everRan.size,
      status: status.body,
      control: budgetView.body.control,
      paidGpuHoursPerHour: window.paidGpuHoursPerHour,
      ms: performance.now() - started,
    };
  } finally {
    await boa.close();
  }
}
