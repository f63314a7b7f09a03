import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino, type Logger } from 'pino';
import { createApp } from '../api/app.ts';
import { LocalExecutor } from '../cloud/local/executor.ts';
import { LocalNodePool } from '../cloud/local/local-node-pool.ts';
import { LogMetricsSink } from '../cloud/log-sink.ts';
import { ProfileError, type ProfileFile, parseProfileFile } from '../core/profile.ts';
import { openStore } from '../store/db.ts';
import { JobIdMark } from '../store/job-ids.ts';
import { Repository } from '../store/repository.ts';
import { InlinePlanComputer, type PlanComputer, WorkerPlanComputer } from './calculator/computer.ts';
import { ConfigError, executorKind, publicUrl, type ServiceConfig } from './config.ts';
import { unknownPriceWarning } from './config-instance.ts';
import { checkStartingBudget } from './config-budget.ts';
import { ignoredProfiles } from './config-profiles.ts';
import type { Clock, Executor, MetricsSink, NodePool } from './ports.ts';
import { Scheduler } from './scheduler.ts';
import { BoaService } from './service.ts';
import type { OperatorToken } from './operator-token.ts';
import { checkTokenSetting, jobTokenKeyOf, operatorToken } from './boot-secrets.ts';
import { instanceIdOf } from './instance-id.ts';
import { checkExecutorSwitch, EXECUTOR_KIND_KEY } from './executor-switch.ts';
import { checkLocalPoolGpus, type LaunchedWith, LOCAL_POOL_TYPE_KEY } from './local-pool-gpus.ts';
import { classesLeftOut } from './classes-over-bound.ts';

// Loaded only with --cloud aws, so the local default never loads the AWS SDK.
const AWS_MODULE = '../cloud/aws/index.ts';
// Loaded only with the kubernetes executor, so the local default never loads the Kubernetes client.
const KUBERNETES_MODULE = '../cloud/kubernetes/index.ts';

export const DEFAULT_PROFILES = resolve(import.meta.dirname, '../../data/profiles.json');

export interface BootOverrides {
  clock?: Clock;
  pool?: NodePool;
  metrics?: MetricsSink;
  computer?: PlanComputer;
  /** The frontier's and the views' computer (ServiceDeps.queries); default: a worker when `computer` is not given. */
  queries?: PlanComputer;
  logger?: Logger;
  /** Use ':memory:' for tests that need no file. */
  dataDir?: string;
  /** null: no executor (a workload is refused). Default: from config (none for an in-memory store). */
  executor?: Executor | null;
  /** `--init`: a stored database that fails the start-up checks is moved aside and a fresh one made. */
  init?: boolean;
  /** BOA_ROLLBACK_TO_COPY=1: a database a newer boa migrated is moved aside and its copy for this version used. */
  rollbackToCopy?: boolean;
  /**
   * Runs once profiles and the store have passed their checks and before anything can change the
   * world (a resize): main binds the HTTP port here, so a taken port also ends the start cleanly.
   */
  beforeSideEffects?: () => Promise<void>;
  /**
   * Runs when the start is refused once the store is open (the token, the port), before the store's
   * lock is released: main removes a data dir this start made, which another start on the same path
   * could take over, and fill, as soon as the lock is free (found in review).
   */
  onRefused?: (error: unknown) => void;
}

/** The queries' worker's heap, MB (see bootService). */
const QUERIES_HEAP_MB = 256;

export const systemClock: Clock = { now: () => Date.now() };

/** How long the start waits for the executor's first look at the replicas. */
const STARTUP_RECONCILE_MS = 10_000;

/** Wires the service from its configuration; every port can be overridden (tests, the demo). */
export async function bootService(config: ServiceConfig, overrides: BootOverrides = {}) {
  const logger = overrides.logger ?? pino({ level: config.logLevel });
  const clock = overrides.clock ?? systemClock;
  const dataDir = overrides.dataDir ?? config.dataDir;
  // Everything that can refuse a start is checked before anything is changed: the settings (profiles,
  // the token's), then the store. A refused setting leaves no data dir behind.
  const profiles = readProfiles(config.profiles);
  checkTokenSetting(config);
  const store = openStore(dataDir, {
    init: overrides.init,
    onMovedAside: (from, to) =>
      logger.warn({ event: 'database_moved_aside', from, to }, `--init: ${from} moved aside to ${to}`),
    onCopied: ({ path, tag, pending }) =>
      logger.info(
        { event: 'database_copied', copy: path, at: tag, migrations: pending },
        `before migrating (${pending.join(', ')}): the database as it was is kept at ${path}, for a rollback to this version`,
      ),
    rollbackToCopy: overrides.rollbackToCopy,
    onRolledBack: (newerAt, copy, copiedAt) =>
      logger.warn(
        { event: 'database_rolled_back', copy, copiedAt: copiedAt.toISOString(), newerAt },
        `BOA_ROLLBACK_TO_COPY: the database a newer boa migrated is moved aside to ${newerAt} and this version starts from its copy ${copy}, written ${copiedAt.toISOString()}. ` +
          'Everything since is not in it: jobs submitted since are unknown (their pods are stopped); jobs that finished since wait or run again as the copy has them; ' +
          'the ledger since is lost, so the paid average over the budget window reads low and boa may spend up to the budget again over hours already paid ' +
          '(its own paid-average alarm will not see it; AWS-side alarms do): set a lower budget until the window has passed. Unset BOA_ROLLBACK_TO_COPY',
      ),
  });
  const db = store.db;
  const repo = new Repository(db, dataDir === ':memory:' ? undefined : new JobIdMark(join(dataDir, 'jobs')));
  let tokens: OperatorToken;
  let jobTokenKey: Buffer;
  let pool: NodePool;
  let metrics: MetricsSink;
  let executor: Executor | undefined;
  try {
    // First: a refused starting budget leaves no token written.
    checkStartingBudget(config, repo, profiles.classes);
    tokens = await operatorToken(config, dataDir, clock, logger);
    jobTokenKey = jobTokenKeyOf(dataDir, logger);
    // Before the pool: a refused start changes nothing.
    if (overrides.executor === undefined)
      checkExecutorSwitch(repo.getSetting(EXECUTOR_KIND_KEY), executorKind(config), repo.activeJobs());
    await overrides.beforeSideEffects?.();
    // Refused as a setting too (`--executor kubernetes` with no cluster to reach): undone the same way.
    pool = overrides.pool ?? (await cloudPool(config, repo, clock, logger));
    metrics = overrides.metrics ?? (await cloudMetrics(config, logger));
    if (overrides.executor === undefined) {
      const kind = executorKind(config);
      executor = await createExecutor(config, dataDir, logger);
      // Kept once an executor runs jobs: the jobs it starts are its own.
      if (executor && repo.getSetting(EXECUTOR_KIND_KEY) !== kind)
        repo.putSetting(EXECUTOR_KIND_KEY, kind, clock.now());
    } else executor = overrides.executor ?? undefined;
  } catch (error) {
    try {
      overrides.onRefused?.(error);
    } finally {
      store.close();
    }
    throw error;
  }
  const computer = overrides.computer ?? new WorkerPlanComputer();
  // Queries' own worker, with a smaller heap: with the plans' at most 512 MB, the two stay within the
  // pod's 1 GiB beside the service's own (the frontier of a class of 1000 epochs x 1024 widths was computed within a 200 MB heap).
  const queries =
    overrides.queries ??
    (overrides.computer ? undefined : new WorkerPlanComputer({ maxHeapMb: QUERIES_HEAP_MB }));
  const service = new BoaService({
    config,
    repo,
    clock,
    pool,
    metrics,
    computer,
    ...(queries ? { queries } : {}),
    logger,
    executor,
    jobTokenKey,
    rolledBack: store.rolledBack,
  });
  service.init(profiles.classes);
  const stored = repo.listClasses().map((c) => c.profile);
  const ignoredFile = ignoredProfiles(config.profiles, profiles.classes, stored);
  if (ignoredFile) logger.warn({ event: 'config_profiles_ignored', profiles: config.profiles }, ignoredFile);
  const leftOut = classesLeftOut(service);
  if (leftOut) logger.error({ event: 'classes_over_bound', classes: leftOut.classes }, leftOut.message);
  const unpriced = unknownPriceWarning(config);
  if (unpriced) logger.warn({ event: 'node_price_unknown', instanceType: config.instanceType }, unpriced);
  const scheduler = new Scheduler(service);
  scheduler.resume();
  const app = createApp(service, scheduler, tokens);
  tokens.start();
  const token = tokens.current;
  // What the executor runs is seen before the first tick and the first job: replicas that ended while
  // the service was down (their jobs finish when they ended, allocated until then, not at the restart),
  // and the ids a database started afresh must number above. At most a few seconds: an API server that
  // hangs (the Kubernetes executor retries for about a minute) must not hold up the start; the ticks'
  // reconciles carry on, and jobs are registered once it has answered (Execution.registrationBlocked).
  service.execution.reconcile();
  await Promise.race([service.execution.settle(), sleep(STARTUP_RECONCILE_MS, undefined, { ref: false })]);
  const close = async () => {
    tokens.stop();
    await service.execution.close();
    // The computer first: closing it ends a computation in flight, which a hung one never does itself
    // (shutdown waited for its timeout, minutes; found in review). A restart plans again.
    service.planner.stop();
    await computer.close();
    await queries?.close();
    await service.planner.idle();
    await scheduler.settle();
    store.close();
  };
  return { service, scheduler, app, repo, db, token, tokens, pool, logger, close };
}

/** The profiles file, or a ConfigError naming it and what is wrong (missing, not JSON, invalid). */
function readProfiles(file: string | undefined): ProfileFile {
  const path = file ?? DEFAULT_PROFILES;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // The default one is committed beside the service's state in data/: removing data/ to start afresh
    // removes it too.
    const hint =
      file === undefined && code === 'ENOENT'
        ? ' (it comes with the repository: `git checkout -- data` restores it; to start afresh remove only data/boa.sqlite*, data/token, data/job-token.key and data/jobs)'
        : '';
    throw new ConfigError(`cannot read profiles file ${path}: ${code}${hint}`);
  }
  try {
    return parseProfileFile(JSON.parse(text), path);
  } catch (error) {
    // A ProfileError already names the file and the field.
    if (error instanceof ProfileError) throw new ConfigError(error.message);
    throw new ConfigError(`profiles file ${path} is not JSON: ${(error as Error).message}`);
  }
}

async function createExecutor(
  config: ServiceConfig,
  dataDir: string,
  logger: Logger,
): Promise<Executor | undefined> {
  if (executorKind(config) === 'kubernetes') {
    try {
      const module = (await import(KUBERNETES_MODULE)) as {
        createKubernetesExecutor: (
          c: ServiceConfig,
          l: Logger,
          deps: { instanceId: string },
        ) => Promise<Executor> | Executor;
      };
      // This boa's id (instance-id.ts): the jobs namespace's claim names it.
      return await module.createKubernetesExecutor({ ...config, dataDir }, logger, {
        instanceId: instanceIdOf(dataDir),
      });
    } catch (error) {
      const message = `executor "kubernetes" is not available: ${(error as Error).message}`;
      // Asked for by name: refuse to start. Only implied by --cloud aws: run, but run no workloads.
      if (config.executor === 'kubernetes') throw new ConfigError(message);
      logger.warn({ event: 'executor_unavailable', error: (error as Error).message }, message);
      return undefined;
    }
  }
  // Replicas' records live in the data dir; an in-memory store (tests) has none, so runs no jobs.
  if (dataDir === ':memory:') return undefined;
  return new LocalExecutor({
    dataDir,
    terminationGraceSeconds: config.terminationGraceSeconds,
    logger,
    serviceUrl: publicUrl(config),
  });
}

async function cloudMetrics(config: ServiceConfig, logger: Logger): Promise<MetricsSink> {
  if (config.cloud !== 'aws') return new LogMetricsSink(logger);
  const { createAwsMetricsSink } = await import(AWS_MODULE);
  return createAwsMetricsSink(config, logger);
}

async function cloudPool(
  config: ServiceConfig,
  repo: Repository,
  clock: Clock,
  logger: Logger,
): Promise<NodePool> {
  if (config.cloud === 'aws') {
    const { createAwsNodePool } = await import(AWS_MODULE);
    return createAwsNodePool(config, logger);
  }
  // The emulated node group persists itself with the service's state, so a restart finds its nodes.
  const snapshot = repo.getSetting('localPool');
  const launchedWith = repo.getSetting<LaunchedWith>(LOCAL_POOL_TYPE_KEY);
  checkLocalPoolGpus(
    launchedWith,
    snapshot,
    { ...config, releaseSeconds: config.local.releaseSeconds },
    clock.now(),
  );
  // Kept before the pool can launch a node: every node up then has this start's GPUs.
  if (launchedWith?.instanceType !== config.instanceType || launchedWith.gpusPerNode !== config.gpusPerNode)
    repo.putSetting(
      LOCAL_POOL_TYPE_KEY,
      { instanceType: config.instanceType, gpusPerNode: config.gpusPerNode } satisfies LaunchedWith,
      clock.now(),
    );
  return new LocalNodePool(
    {
      minSize: 0,
      // boa's own cap (maxNodes) is kept by boa, not the emulated group: lowered across a restart, the
      // group released its newest nodes at once, busy or not, keeping idle ones, and jobs moved.
      maxSize: config.local.maxNodes,
      bootSeconds: config.local.bootSeconds,
      releaseSeconds: config.local.releaseSeconds,
      gpusPerNode: config.gpusPerNode,
    },
    clock,
    { logger, onChange: (snapshot) => repo.putSetting('localPool', snapshot, clock.now()) },
    snapshot,
  );
}

export { InlinePlanComputer };
