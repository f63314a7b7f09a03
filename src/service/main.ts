/**
 * `npm start`: the boa service. With no flags it runs on its embedded default: SQLite under ./data and
 * a local emulated node pool, no AWS account needed. `--cloud aws` (or BOA_CLOUD=aws) drives an EKS
 * managed node group. Settings: defaults < --config FILE < BOA_* environment < flags.
 */
import { join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { ConfigError, localUrl, readConfigFile, resolveConfig } from './config.ts';
import { configFromEnv, envFlag, unknownEnv } from './config-env.ts';
import { bootService } from './boot.ts';
import { announceStart, chooseLogFormat, createLogger, LOG_FORMATS } from './logging.ts';
import { fromSource } from './config-sources.ts';
import { PRUNE_EVERY_MS, pruneAll } from './retention.ts';
import { undoFreshDataDir } from './fresh-data-dir.ts';
import { listen, StartupError, startFailure } from './startup.ts';
import { logTickFailure } from './pass-failure.ts';

const program = new Command('boa-service')
  .description('boa: budget-aware GPU rental service')
  .option('--config <file>', 'JSON configuration file')
  .option('--port <n>', 'HTTP port (default 8080)')
  .option('--host <addr>', 'listen address (default 127.0.0.1; 0.0.0.0 in a container)')
  .option('--data <dir>', 'data directory for the SQLite file (default ./data)')
  .addOption(new Option('--cloud <kind>', 'node pool').choices(['local', 'aws']))
  .addOption(
    new Option(
      '--executor <kind>',
      'what runs jobs (default: local with --cloud local, kubernetes with aws)',
    ).choices(['local', 'kubernetes']),
  )
  .option(
    '--token <token>',
    'operator bearer token (default: BOA_TOKEN, or generated into the data dir locally)',
  )
  .option('--profiles <file>', 'job-class profiles to seed a new data dir with')
  .option('--budget <gpuHoursPerHour>', 'budget set at the first start only (later: boa budget set)')
  .option('--tick-seconds <s>', 'scheduling tick (default 60)')
  .addOption(
    new Option('--log-format <format>', 'logs: readable on a terminal, else JSON (auto); or force one')
      .choices(LOG_FORMATS)
      .env('BOA_LOG_FORMAT'),
  )
  .option('--init', 'start fresh on purpose: a stored database that fails the checks is moved aside')
  .showHelpAfterError()
  .exitOverride();

function flags(): Record<string, unknown> {
  const o = program.parse().opts<Record<string, string | undefined>>();
  // An empty value is refused, not read as unset: `--port "$PORT"` with PORT unset is a mistake, and
  // Number("") is 0. (An empty BOA_* variable is unset, as shells have it.)
  for (const option of program.options) {
    const value = o[option.attributeName()];
    if (typeof value === 'string' && value.trim() === '')
      throw new ConfigError(`${option.long} needs a value, got "${value}"`);
  }
  const num = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n)) throw new ConfigError(`--${name} must be a number, got "${value}"`);
    return n;
  };
  const out: Record<string, unknown> = {
    port: num('port', o.port),
    host: o.host,
    dataDir: o.data,
    cloud: o.cloud,
    executor: o.executor,
    token: o.token,
    profiles: o.profiles,
    budget: num('budget', o.budget),
    tickSeconds: num('tick-seconds', o.tickSeconds),
  };
  return fromSource(
    { kind: 'flags' },
    Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)),
  );
}

// Set once the data dir is known: a start refused for its port leaves no new data dir behind. Run
// while the store's lock is held (bootService's onRefused); a start refused before it opened the store
// made nothing to undo.
let undoFreshStart: (() => void) | undefined;
// An empty variable is unset (docs/service.md); commander would refuse BOA_LOG_FORMAT="" as a bad choice.
if (process.env.BOA_LOG_FORMAT?.trim() === '') delete process.env.BOA_LOG_FORMAT;
try {
  const cli = flags();
  const file = program.opts<{ config?: string }>().config;
  const config = resolveConfig(file ? readConfigFile(file) : {}, configFromEnv(process.env), cli);
  const rollbackToCopy = envFlag(process.env, 'BOA_ROLLBACK_TO_COPY');
  if (config.dataDir === ':memory:' && !config.token && !config.tokenSecretArn) {
    // The token would be generated and kept nowhere: a service nobody could call.
    throw new ConfigError(
      '--data :memory: keeps no token file: give the operator token with BOA_TOKEN or --token',
    );
  }
  undoFreshStart = undoFreshDataDir(config.dataDir);
  const logFormat = chooseLogFormat(program.opts<{ logFormat?: string }>().logFormat, process.stdout.isTTY);
  const startLogger = createLogger(config.logLevel, logFormat);
  for (const { name, hint } of unknownEnv(process.env)) {
    startLogger.warn(
      { event: 'unknown_env', name, hint },
      `environment variable ${name} is not one boa reads, ignored (${hint})`,
    );
  }
  // The port is bound once the data dir has passed its checks and before anything is changed.
  let http: Awaited<ReturnType<typeof listen>> | undefined;
  const boa = await bootService(config, {
    init: program.opts<{ init?: boolean }>().init,
    rollbackToCopy,
    logger: startLogger,
    beforeSideEffects: async () => {
      http = await listen(config.host, config.port);
    },
    // While this start still holds the data dir's lock: released first, another start could own it.
    onRefused: (error) => {
      // A setting refused once the store is open (the starting budget) leaves no data dir either.
      if (error instanceof StartupError || error instanceof ConfigError) undoFreshStart?.();
      undoFreshStart = undefined;
    },
  });
  if (!http) throw new Error('the HTTP port was not bound during boot');
  const { service, scheduler, logger } = boa;
  if (service.state.budget && !service.state.plan) void service.planner.request('start');

  let ticking = false;
  const tick = async () => {
    if (ticking) return; // a slow pool call must not stack ticks
    ticking = true;
    try {
      await scheduler.tick();
    } catch (error) {
      logTickFailure(logger, error, service.deps.repo.db.$client.name);
    } finally {
      ticking = false;
    }
  };
  await tick();
  const timer = setInterval(tick, config.tickSeconds * 1000);
  // Out of turn: a job placement left waiting for a stopping replica's GPUs starts when they are freed.
  scheduler.tickWanted = () => void tick();
  // Ledger rows, plans and resizes older than the longest window are pruned on a timer.
  const prune = () => pruneAll(service, service.deps.repo.db.$client.name);
  prune();
  const pruneTimer = setInterval(prune, PRUNE_EVERY_MS);

  http.ready(boa.app.fetch);
  const server = http.server;
  let stopping = false;
  const stop = async (signal: string) => {
    // Ctrl-C under npm arrives twice (the terminal's and npm's own): one graceful stop, not two.
    if (stopping) return;
    stopping = true;
    // Jobs are not stopped with the service: say so, so nobody kills them by hand thinking them orphans.
    const running = [...service.state.jobs.values()].filter((j) => j.state === 'running').length;
    logger.info(
      { event: 'stopping', signal, runningJobs: running },
      running > 0
        ? `stopping; ${running} running job${running === 1 ? '' : 's'} keep${running === 1 ? 's' : ''} running, and the next start on this data dir adopts ${running === 1 ? 'it' : 'them'}`
        : 'stopping',
    );
    clearInterval(timer);
    scheduler.tickWanted = undefined;
    clearInterval(pruneTimer);
    server.close();
    await boa.close();
    process.exit(0);
  };
  // Before the start is announced: whoever reads it may signal at once.
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  announceStart(
    logger,
    logFormat,
    {
      url: localUrl(config.host, http.port),
      tokenFile: config.token || config.tokenSecretArn ? undefined : join(config.dataDir, 'token'),
      dataDir: config.dataDir,
      cloud: config.cloud,
      localBootSeconds: config.local.bootSeconds,
      budgetSet: service.state.budget !== undefined,
      jobs: service.state.jobs.size,
    },
    process.stdout,
  );
} catch (error) {
  // commander has printed its own line (a bad flag, or --help); a bad flag is a setting to fix.
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  // One line naming the cause, never a stack trace: exit 2 for a setting to fix, 1 otherwise.
  const { line, exitCode } = startFailure(error);
  process.stderr.write(`${line}\n`);
  process.exit(exitCode);
}
