import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pino, type Logger } from 'pino';
import { createApp } from '../api/app.ts';
import { LocalNodePool } from '../cloud/local/local-node-pool.ts';
import { LogMetricsSink } from '../cloud/log-sink.ts';
import { parseProfileFile } from '../core/profile.ts';
import { openDb } from '../store/db.ts';
import { Repository } from '../store/repository.ts';
import { InlinePlanComputer, type PlanComputer, WorkerPlanComputer } from './calculator/computer.ts';
import { ConfigError, type ServiceConfig } from './config.ts';
import type { Clock, MetricsSink, NodePool } from './ports.ts';
import { Scheduler } from './scheduler.ts';
import { BoaService } from './service.ts';
import { newToken } from './tokens.ts';

// Loaded only with --cloud aws, so the local default never loads the AWS SDK.
const AWS_MODULE = '../cloud/aws/index.ts';

export const DEFAULT_PROFILES = resolve(import.meta.dirname, '../../data/profiles.json');

export interface BootOverrides {
  clock?: Clock;
  pool?: NodePool;
  metrics?: MetricsSink;
  computer?: PlanComputer;
  logger?: Logger;
  /** Use ':memory:' for tests that need no file. */
  dataDir?: string;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * The operator token: from config, or (local mode only) generated once into the data dir with
 * owner-only permissions, so a newcomer's first run needs no setup.
 */
function operatorToken(config: ServiceConfig, dataDir: string): string {
  if (config.token) return config.token;
  if (config.cloud === 'aws')
    throw new ConfigError('cloud "aws" needs an operator token: set BOA_TOKEN or --token');
  if (dataDir === ':memory:') return newToken();
  const file = join(dataDir, 'token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const token = newToken();
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

/** Wires the service from its configuration; every port can be overridden (tests, the demo). */
export async function bootService(config: ServiceConfig, overrides: BootOverrides = {}) {
  const logger = overrides.logger ?? pino({ level: config.logLevel });
  const clock = overrides.clock ?? systemClock;
  const dataDir = overrides.dataDir ?? config.dataDir;
  const db = openDb(dataDir);
  const repo = new Repository(db);
  const token = operatorToken(config, dataDir);
  const pool = overrides.pool ?? (await cloudPool(config, repo, clock, logger));
  const metrics = overrides.metrics ?? (await cloudMetrics(config, logger));
  const computer = overrides.computer ?? new WorkerPlanComputer();
  const service = new BoaService({ config, repo, clock, pool, metrics, computer, logger });
  const profiles = parseProfileFile(
    JSON.parse(readFileSync(config.profiles ?? DEFAULT_PROFILES, 'utf8')),
    config.profiles ?? DEFAULT_PROFILES,
  );
  service.init(profiles.classes);
  const scheduler = new Scheduler(service);
  scheduler.resume();
  const app = createApp(service, scheduler, token);
  const close = async () => {
    await service.planner.idle();
    await scheduler.settle();
    await computer.close();
    db.$client.close();
  };
  return { service, scheduler, app, repo, db, token, pool, logger, close };
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
  return new LocalNodePool(
    {
      minSize: 0,
      maxSize: Math.min(config.local.maxNodes, config.maxNodes ?? Number.MAX_SAFE_INTEGER),
      bootSeconds: config.local.bootSeconds,
      releaseSeconds: config.local.releaseSeconds,
      gpusPerNode: config.gpusPerNode,
    },
    clock,
    { logger, onChange: (snapshot) => repo.putSetting('localPool', snapshot, clock.now()) },
    repo.getSetting('localPool'),
  );
}

export { InlinePlanComputer };
