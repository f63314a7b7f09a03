/**
 * Demo replay: the real boa service (store, tick, calculator worker, API) in one process with the local
 * node pool, on a virtual clock, driven by emulated jobs that follow their allocations with the measured
 * ground truth. Prints the simulator's JSON metrics. Resumable: kill it (even with -9) and run the same
 * command with the same --state to continue.
 *   npm run -s demo -- --trace FILE [--apps a,b] --budget B [--speed X|max] [--state DIR] [--prior none|trace] [--executor local]
 *     [--warmup-hours H] [--budget-window-hours H] [--drain-after-hours H] [--fill-below-band S] [--plan-cap-multiple M] [--credit-spend-hours H] [--credit-load-share S] [--rate-confidence Z] [--first-day-arrivals A]
 *     [--history F1,F2,... [--history-gap-hours H]]
 * With --executor local every job is submitted with a command that the local executor runs as real
 * processes, one per node of its placement, restarted at each rescale; the emulated jobs still report
 * progress and completion at their ground-truth times (a real process cannot run on virtual time).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { arrivalRatesPerHour } from '../src/core/trace.ts';
import type { WorldSnapshot } from '../src/sim/replay/world.ts';
import { loadProfileFile, loadTrace, parseList, runMain, UsageError } from './lib/inputs.ts';
import { demoHistory, importDemoHistory } from './lib/demo-history.ts';
import { demoSettings, settingsByFlag } from './lib/demo-settings.ts';
import { changedOptions, digest, type ReplayOptions } from './lib/demo-replay-options.ts';
import { demoProgram } from './lib/demo-program.ts';
import { demoStartSeconds } from './lib/demo-start.ts';

/** Virtual time: the trace's seconds from an arbitrary fixed start, as epoch milliseconds. */
const EPOCH = Date.UTC(2026, 0, 1);

await runMain(async () => {
  const opts = demoProgram.parse().opts<{
    trace: string;
    budget: string;
    apps?: string;
    speed: string;
    state?: string;
    data: string;
    profiles: string;
    tickSeconds: string;
    prior: 'none' | 'trace';
    executor?: 'local';
    warmupHours: string;
    budgetWindowHours: string;
    drainAfterHours: string;
    fillBelowBand: string;
    planCapMultiple: string;
    creditSpendHours: string;
    creditLoadShare: string;
    rateConfidence: string;
    firstDayArrivals: string;
    history?: string;
    historyGapHours: string;
  }>();
  const budget = Number(opts.budget);
  if (!(budget > 0)) throw new UsageError(`--budget must be a positive number, got "${opts.budget}"`);
  const speed = opts.speed === 'max' ? Number.POSITIVE_INFINITY : Number(opts.speed);
  if (!(speed > 0)) throw new UsageError(`--speed must be a positive number or max, got "${opts.speed}"`);
  const tickSeconds = Number(opts.tickSeconds);
  if (!(tickSeconds > 0)) throw new UsageError(`--tick-seconds must be positive, got "${opts.tickSeconds}"`);

  const settings = demoSettings(opts);

  const trace = loadTrace(opts.trace);
  const apps = opts.apps ? parseList(opts.apps, '--apps') : undefined;
  const rates = arrivalRatesPerHour(trace, apps);
  const jobs = trace.filter((j) => j.application in rates);
  // The names' bounds are the API's (with hono, some 40 modules): loaded once the options passed.
  const { checkDemoJobNames } = await import('./lib/demo-names.ts');
  checkDemoJobNames(jobs, opts.trace);
  const profiles = loadProfileFile(opts.profiles);
  const history = demoHistory(opts, opts.trace, apps);
  // The service and the replay (some 500 modules, seconds to load on a busy machine) load only once the
  // options are checked: a refused option is answered without them.
  const [
    { pino },
    { bootService },
    { resolveConfig },
    { summarize },
    { BoaPlanner },
    { ApiError, LauncherClient },
    { ReplayWorld },
    { truthProvider },
    { HeaviestWindow },
    { ReplayUnspent },
    { REPLICA_WORKLOAD, earlyTicks, replicasRun, replicasSettled, stopReplicas },
  ] = await Promise.all([
    import('pino'),
    import('../src/service/boot.ts'),
    import('../src/service/config.ts'),
    import('../src/sim/engine/metrics.ts'),
    import('../src/sim/policies/boa/planner.ts'),
    import('../src/sim/replay/api-client.ts'),
    import('../src/sim/replay/world.ts'),
    import('../src/sim/run.ts'),
    import('./lib/heaviest-window.ts'),
    import('./lib/replay-unspent.ts'),
    import('./lib/demo-replicas.ts'),
  ]);
  // Without --state the replay cannot be resumed, so its temporary state is removed when it ends.
  const stateDir = opts.state ?? mkdtempSync(join(tmpdir(), 'boa-demo-'));
  const removeState = () => {
    if (opts.state === undefined) rmSync(stateDir, { recursive: true, force: true });
  };

  let seconds = demoStartSeconds(jobs);
  const clock = { now: () => EPOCH + seconds * 1000 };
  const setTime = (t: number) => {
    seconds = Math.max(seconds, t);
  };
  const config = resolveConfig({
    dataDir: stateDir,
    token: 'demo-operator-token-0123456789',
    profiles: opts.profiles,
    // --prior trace: the estimator starts from the trace's own rates (the simulator's --rates prior).
    ...(opts.prior === 'trace' ? { priorRates: rates } : {}),
    tickSeconds,
    ...settings,
    logLevel: 'warn',
  });
  const boa = await bootService(config, { clock, logger: pino({ level: 'warn' }, pino.destination(2)) });
  // Interrupted (Ctrl-C, a killed run): the replay stops at the end of its tick, its replicas are stopped
  // and, since a replay without --state cannot be resumed, its state removed: nothing is left behind.
  // A second signal leaves at once.
  let interrupted: NodeJS.Signals | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) {
        removeState();
        process.exit(signal === 'SIGINT' ? 130 : 143);
      }
      interrupted = signal;
    });
  }
  const client = new LauncherClient((path, init) => boa.app.request(path, init), boa.token);
  const world = new ReplayWorld(
    client,
    jobs,
    profiles,
    truthProvider(opts.data),
    30,
    opts.executor ? REPLICA_WORKLOAD : undefined,
  );

  // What this replay is: a --state started with other options resumes the run it holds, and the result
  // would be reported under these (another budget's label; another trace's jobs on its service).
  const replayOptions: ReplayOptions = {
    '--trace/--apps': digest(jobs),
    '--budget': budget,
    '--prior': opts.prior,
    '--tick-seconds': tickSeconds,
    ...settingsByFlag(settings),
    '--executor': opts.executor ?? 'none',
    '--history': history.length ? digest(history) : 'none',
  };
  const saved = boa.repo.getSetting<WorldSnapshot>('replay');
  const startedWith = boa.repo.getSetting<ReplayOptions>('replay-options');
  const differ = startedWith ? changedOptions(startedWith, replayOptions) : [];
  if (saved && differ.length > 0) {
    await boa.close();
    throw new UsageError(
      `--state ${stateDir} holds a replay started with other options (${differ.join('; ')}): ` +
        'give the same ones to resume it, or another --state for a new replay',
    );
  }
  if (saved) {
    world.restore(saved);
    seconds = saved.now;
    process.stderr.write(`resuming the replay in ${stateDir} at ${(saved.now / 3600).toFixed(2)} h\n`);
  } else {
    if (history.length > 0) {
      try {
        await importDemoHistory(boa, history, clock.now());
      } catch (error) {
        removeState();
        throw error;
      }
    }
    try {
      await client.setBudget(budget);
    } catch (error) {
      await boa.close();
      removeState();
      // A budget the service refuses (below what one job of the cheapest class needs) is bad input.
      if (error instanceof ApiError) throw new UsageError(`--budget ${budget}: ${error.message}`);
      throw error;
    }
    await boa.service.planner.idle();
    boa.repo.putSetting('replay-options', replayOptions, clock.now());
    // The service accepts a budget below the load's minimum (jobs queue), but a new service has no
    // rates to warn from: without this the replay just ran for hours of virtual time without a word.
    const minimum = new BoaPlanner(profiles, 'exact', 1).minFeasible(rates);
    if (budget < minimum * (1 - 1e-9)) {
      process.stderr.write(
        `warning: --budget ${budget} is below ${minimum.toFixed(2)} GPU-hours/hour, the minimum feasible ` +
          "budget at the trace's rates: jobs queue until the budget allows them (the replay may run long)\n",
      );
    }
  }
  const existing = await client.jobsByName();
  if (saved) {
    const finished = new Map<number, number>();
    for (const job of existing.values())
      if (job.finishedAt !== null) finished.set(job.id, (job.finishedAt - EPOCH) / 1000);
    world.finishFromService(finished);
  }
  const heaviestWindow = new HeaviestWindow(boa.service);
  // Only for a replay run whole: a resumed one would count its last part alone.
  const unspent = saved
    ? undefined
    : new ReplayUnspent(boa.service, budget, seconds, (t) => EPOCH + t * 1000);
  const started = performance.now();
  let lastReport = started;
  // The service's early ticks (a stopping replica ended while a job waits for its GPUs): run after
  // each tick's replicas have settled (demo-replicas.ts earlyTicks).
  const tickWanted = { now: false };
  if (opts.executor) boa.scheduler.tickWanted = () => void (tickWanted.now = true);
  while (!world.done && !interrupted) {
    const from = seconds;
    const to = from + tickSeconds;
    await world.step(from, to, setTime, existing);
    // With real processes a tick takes real time, so a re-plan that arrivals asked for would land at a
    // tick that depends on the machine's speed: here it is always in place before the tick.
    if (opts.executor) await boa.service.planner.idle();
    setTime(to);
    await world.report();
    await boa.scheduler.tick();
    await boa.service.planner.idle();
    await boa.scheduler.settle();
    // The replicas follow each tick before the next (the executor never holds up the tick itself): the
    // service re-checks every second while replicas stop; virtual time cannot wait, so it is done here.
    if (opts.executor) {
      await replicasSettled(boa);
      // A node emptied by the stopped replicas is removed at once (as the service does between ticks).
      await boa.scheduler.settle();
      await earlyTicks(boa, tickWanted);
    }
    await world.follow(to);
    heaviestWindow.observe(clock.now());
    unspent?.observe(to);
    boa.repo.putSetting('replay', world.snapshot(to), clock.now());
    if (Number.isFinite(speed)) {
      const due = started + ((to - (jobs[0]?.time ?? 0)) * 1000) / speed;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
    }
    if (performance.now() - lastReport > 5000) {
      lastReport = performance.now();
      const done = world.records().filter((r) => r.completedAt !== null).length;
      process.stderr.write(`replay ${(to / 3600).toFixed(2)} h: ${done}/${jobs.length} jobs done\n`);
    }
  }
  if (interrupted) {
    await stopReplicas(boa);
    await boa.close();
    removeState();
    process.exit(interrupted === 'SIGINT' ? 130 : 143);
  }
  const records = world.records();
  const first = Math.min(...records.map((r) => r.arrival));
  const last = Math.max(...records.map((r) => r.completedAt ?? first));
  const ledger = boa.service.ledgerAverages(EPOCH + first * 1000, EPOCH + last * 1000);
  const metrics = summarize(
    records.map((r, id) => ({ id, name: '', app: '', ...r })),
    { start: first, end: last, paidGpuSeconds: ledger.paidGpuHoursPerHour * (last - first), peakNodes: 0 },
  );
  const result = {
    policy: 'boa-service',
    budget,
    jobs: metrics.jobs,
    completed: metrics.completed,
    avgJctSeconds: metrics.avgJctSeconds,
    p95JctSeconds: metrics.p95JctSeconds,
    allocatedGpuHoursPerHour: metrics.allocatedGpuHoursPerHour,
    paidGpuHoursPerHour: metrics.paidGpuHoursPerHour,
    // The service's own ledger over the run (first arrival to last completion): what `boa status` shows.
    ledgerPaidGpuHoursPerHour: ledger.paidGpuHoursPerHour,
    // The ledger's most paid in any full budget window (24 h), per hour; null: the replay was shorter.
    ledgerPeakWindowPaidGpuHoursPerHour: heaviestWindow.perHour(),
    rescales: metrics.rescales,
    simMs: performance.now() - started,
    avgQueueSeconds: metrics.avgQueueSeconds,
    spanHours: metrics.spanHours,
    arrivalSpanHours: metrics.arrivalSpanHours,
    prior: opts.prior,
    historyArrivals: history.length,
    state: opts.state ?? null,
    // GPU-hours below the budget (jobs waiting, usable by running jobs, nothing could use) and over it,
    // from the first arrival to the last completion.
    ...(unspent ? { unspent: unspent.finish(last) } : {}),
    ...(opts.executor ? { executor: await replicasRun(boa, stateDir) } : {}),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await boa.close();
  removeState();
});
