/**
 * `npm start`: the boa service. With no flags it runs on its embedded default: SQLite under ./data and
 * a local emulated node pool, no AWS account needed. `--cloud aws` (or BOA_CLOUD=aws) drives an EKS
 * managed node group. Settings: defaults < --config FILE < BOA_* environment < flags.
 */
import { serve } from '@hono/node-server';
import { Command, Option } from 'commander';
import { ConfigError, configFromEnv, readConfigFile, resolveConfig } from './config.ts';
import { bootService } from './boot.ts';

const program = new Command('boa-service')
  .description('boa: budget-aware GPU rental service')
  .option('--config <file>', 'JSON configuration file')
  .option('--port <n>', 'HTTP port (default 8080)')
  .option('--host <addr>', 'listen address (default 127.0.0.1; 0.0.0.0 in a container)')
  .option('--data <dir>', 'data directory for the SQLite file (default ./data)')
  .addOption(new Option('--cloud <kind>', 'node pool').choices(['local', 'aws']))
  .option(
    '--token <token>',
    'operator bearer token (default: BOA_TOKEN, or generated into the data dir locally)',
  )
  .option('--profiles <file>', 'job-class profiles to seed a new data dir with')
  .option('--budget <gpuHoursPerHour>', 'initial budget when none is stored')
  .option('--tick-seconds <s>', 'scheduling tick (default 60)')
  .showHelpAfterError();

function flags(): Record<string, unknown> {
  const o = program.parse().opts<Record<string, string | undefined>>();
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
    token: o.token,
    profiles: o.profiles,
    budget: num('budget', o.budget),
    tickSeconds: num('tick-seconds', o.tickSeconds),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

try {
  const cli = flags();
  const file = program.opts<{ config?: string }>().config;
  const config = resolveConfig(file ? readConfigFile(file) : {}, configFromEnv(process.env), cli);
  const boa = await bootService(config);
  const { service, scheduler, logger } = boa;
  if (service.state.budget && !service.state.plan) void service.planner.request('start');

  let ticking = false;
  const tick = async () => {
    if (ticking) return; // a slow pool call must not stack ticks
    ticking = true;
    try {
      await scheduler.tick();
    } catch (error) {
      logger.error({ event: 'tick_failed', error: (error as Error).message }, 'tick failed');
    } finally {
      ticking = false;
    }
  };
  await tick();
  const timer = setInterval(tick, config.tickSeconds * 1000);

  const server = serve({ fetch: boa.app.fetch, port: config.port, hostname: config.host }, (info) => {
    logger.info(
      {
        event: 'listening',
        url: `http://${config.host}:${info.port}`,
        cloud: config.cloud,
        dataDir: config.dataDir,
      },
      `boa listening on http://${config.host}:${info.port} (token: ${config.token ? 'from config' : `${config.dataDir}/token`})`,
    );
  });
  const stop = async (signal: string) => {
    logger.info({ event: 'stopping', signal }, 'stopping');
    clearInterval(timer);
    server.close();
    await boa.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`boa: ${error.message}\n`);
    process.exit(2);
  }
  throw error;
}
