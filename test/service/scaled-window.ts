/**
 * A budget window scaled down to 6 minutes (1 s ticks, a 36 s horizon) so that it fills and slides many
 * times in a test: the service on its embedded pool with an injected clock, jobs that run RUN_TICKS
 * ticks each, and the cap any full window's paid GPU-hours must stay within.
 */
import { pino } from 'pino';
import { bootService } from '../../src/service/boot.ts';
import { InlinePlanComputer } from '../../src/service/calculator/computer.ts';
import { resolveConfig } from '../../src/service/config.ts';

export const HOUR = 3_600_000;
export const BUDGET = 40;
export const WINDOW_HOURS = 0.1;
export const HORIZON_HOURS = 0.01;
export const SLACK = 0.1;
export const GPUS_PER_NODE = 4;
/** Ticks each job runs before it finishes. */
export const RUN_TICKS = 60;
const CLASSES = ['cifar10', 'bert', 'deepspeech2'];

/** What any full window may pay: budget x (window + slack x horizon). */
export const WINDOW_CAP = BUDGET * (WINDOW_HOURS + SLACK * HORIZON_HOURS);
/**
 * The ceiling keeps a node it holds while within half a node of it (against flapping): at most 2 GPUs
 * over it, for at most one horizon of debt before it is repaid.
 */
export const FLAP_GUARD = (GPUS_PER_NODE / 2) * HORIZON_HOURS;

/**
 * The service at budget 40 on the scaled window; `tick()` ticks once and advances the clock 1 s. With a
 * `dataDir`, `restart()` closes boa and starts it again on the same store (and so the same local pool).
 */
export async function scaledWindowService(token: string, nodeSeconds: number, dataDir = ':memory:') {
  const start = Date.UTC(2026, 0, 1);
  let t = start;
  const config = resolveConfig({
    dataDir,
    token,
    tickSeconds: 1,
    budgetWindowHours: WINDOW_HOURS,
    budgetHorizonHours: HORIZON_HOURS,
    budgetSlack: SLACK,
    local: { maxNodes: 64, bootSeconds: nodeSeconds, releaseSeconds: nodeSeconds },
    logLevel: 'silent',
  });
  // No executor: the jobs here run as the ticks say (RUN_TICKS), on a store in a file as in memory.
  const boot = () =>
    bootService(config, {
      clock: { now: () => t },
      computer: new InlinePlanComputer(),
      logger: pino({ level: 'silent' }),
      dataDir,
      executor: null,
    });
  let boa = await boot();
  let { service, scheduler } = boa;
  service.setBudget(BUDGET);
  const ranFor = new Map<number, number>();
  let registered = 0;
  return {
    get boa() {
      return boa;
    },
    get service() {
      return service;
    },
    start,
    now: () => t,
    /** boa closed and started again on the same store, `downMs` later. */
    async restart(downMs = 0) {
      await boa.close();
      t += downMs;
      boa = await boot();
      ({ service, scheduler } = boa);
    },
    /** Registers `count` jobs, the three classes in turn. */
    register(count: number, prefix: string) {
      for (let i = 0; i < count; i++, registered++)
        service.registerJob(CLASSES[registered % CLASSES.length] as string, `${prefix}-${registered}`);
    },
    /** One tick, its plan and executor settled; jobs that have run RUN_TICKS finish. */
    async tick() {
      await scheduler.tick();
      await service.planner.idle();
      await scheduler.settle();
      for (const job of [...service.state.jobs.values()].filter((j) => j.state === 'running')) {
        const ran = (ranFor.get(job.id) ?? 0) + 1;
        ranFor.set(job.id, ran);
        if (ran >= RUN_TICKS) service.finishJob(job.id, 'done');
      }
      t += 1000;
    },
    /** The ledger's paid GPU-hours over the window that ends now (cut at the start). */
    windowPaid() {
      return service.deps.repo.ledger.paidGpuMs(Math.max(start, t - WINDOW_HOURS * HOUR), t) / HOUR;
    },
  };
}
