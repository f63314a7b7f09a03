/**
 * The service's logs: readable lines on a terminal (pino-pretty), one JSON object per line otherwise
 * (a file, a pipe, a container's log collector) or with `--log-format json`. The first thing printed
 * says where everything is and what to try next, since that is what a newcomer looks for.
 */
import { dirname, relative, resolve } from 'node:path';
import { pino, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { DEFAULT_URL, localTokenFile } from '../cli/connection.ts';
import { ConfigError } from './config.ts';

export type LogFormat = 'pretty' | 'json';
export const LOG_FORMATS = ['auto', 'pretty', 'json'] as const;

/** `auto` (the default) is pretty on a terminal and JSON anywhere else. */
export function chooseLogFormat(requested: string | undefined, isTTY: boolean): LogFormat {
  if (requested === undefined || requested === '' || requested === 'auto') return isTTY ? 'pretty' : 'json';
  if (requested === 'pretty' || requested === 'json') return requested;
  throw new ConfigError(`--log-format must be one of ${LOG_FORMATS.join(', ')}, got "${requested}"`);
}

export type LogDestination = NodeJS.WritableStream & { readonly isTTY?: boolean };

/** The service's logger in the chosen format, writing synchronously to `out` (stdout by default). */
export function createLogger(level: string, format: LogFormat, out: LogDestination = process.stdout): Logger {
  if (format === 'json') return pino({ level }, out);
  const pretty = pinoPretty({
    destination: out,
    sync: true,
    colorize: out.isTTY === true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,event,component,namespace',
    singleLine: true,
  });
  return pino({ level }, pretty);
}

export interface StartInfo {
  readonly url: string;
  /** The generated token's file, or undefined when the token came from the configuration. */
  readonly tokenFile: string | undefined;
  readonly dataDir: string;
  readonly cloud: string;
  readonly localBootSeconds: number;
  readonly budgetSet: boolean;
  readonly jobs: number;
}

/**
 * What to try next: the step of the README's first run that has not happened yet, with what the CLI
 * needs to reach this service from here when it is not the default (another port, another data dir).
 */
export function nextCommand(
  info: Pick<StartInfo, 'budgetSet' | 'jobs'> & Partial<Pick<StartInfo, 'url' | 'tokenFile'>>,
): string {
  const reach: string[] = [];
  if (info.url !== undefined && info.url !== DEFAULT_URL) reach.push(`BOA_URL=${info.url}`);
  const tokenFile = info.tokenFile === undefined ? undefined : resolve(info.tokenFile);
  if (tokenFile !== undefined && tokenFile !== localTokenFile({}, process.cwd()))
    reach.push(`BOA_DATA_DIR=${shellWord(shown(dirname(tokenFile)))}`);
  const prefix = reach.length > 0 ? `${reach.join(' ')} ` : '';
  if (!info.budgetSet) return `${prefix}npx boa budget set 40`;
  if (info.jobs === 0)
    return `${prefix}npx boa jobs submit cifar10 --name first -- node examples/fake-train.mjs`;
  return `${prefix}npx boa status`;
}

/** A path as one word of a shell command line. */
function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' || rel.startsWith('..') ? path : rel;
}

/** The start-up block: the URL, the dashboard, the token file, the data, and the next command. */
export function startLines(info: StartInfo): string[] {
  const nodes =
    info.cloud === 'local'
      ? `cloud local: emulated nodes, ready ${info.localBootSeconds} s after they are asked for`
      : `cloud ${info.cloud}`;
  const data = info.dataDir === ':memory:' ? 'in memory' : `${shown(info.dataDir)}/boa.sqlite`;
  return [
    `boa is listening on ${info.url}`,
    `  dashboard   ${info.url}/  (paste the operator token once)`,
    `  token       ${info.tokenFile ? shown(info.tokenFile) : 'as configured (BOA_TOKEN or --token)'}`,
    `  data        ${data}  (${nodes})`,
    `  next        ${nextCommand(info)}`,
  ];
}

/** Announces the start: the block as plain lines on a terminal, one `listening` event in JSON. */
export function announceStart(logger: Logger, format: LogFormat, info: StartInfo, out: LogDestination): void {
  if (format === 'pretty') {
    out.write(`${startLines(info).join('\n')}\n`);
    return;
  }
  logger.info(
    {
      event: 'listening',
      url: info.url,
      dashboard: `${info.url}/`,
      tokenFile: info.tokenFile ?? null,
      cloud: info.cloud,
      dataDir: info.dataDir,
      next: nextCommand(info),
    },
    `boa listening on ${info.url}`,
  );
}
