/**
 * The secrets a start reads or makes: the operator token (a secret, config, or generated into the data
 * dir) and the key executed jobs' tokens are derived from. Split from boot.ts.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { writeFileDurably } from '../cloud/durable-file.ts';
import { OPERATOR_TOKEN_RULE, usableOperatorToken } from '../core/operator-token-rule.ts';
import { StoreError } from '../store/errors.ts';
import { ConfigError, type ServiceConfig } from './config.ts';
import { OperatorToken } from './operator-token.ts';
import type { Clock } from './ports.ts';
import { StartupError } from './startup.ts';
import { newToken } from './tokens.ts';

// Loaded only with a token secret, so the local default never loads the AWS SDK.
const AWS_MODULE = '../cloud/aws/index.ts';

/**
 * The operator token: from a Secrets Manager secret (re-read, so a rotation needs no restart), from
 * config, or (local mode only) generated once into the data dir with owner-only permissions, so a
 * newcomer's first run needs no setup.
 */
export async function operatorToken(
  config: ServiceConfig,
  dataDir: string,
  clock: Clock,
  logger: Logger,
): Promise<OperatorToken> {
  if (config.tokenSecretArn) {
    const { secretTokenSource } = (await import(AWS_MODULE)) as typeof import('../cloud/aws/index.ts');
    const source = secretTokenSource(config.tokenSecretArn, { logger, region: config.aws?.region });
    let initial: string;
    try {
      initial = await source.read();
    } catch (error) {
      throw new StartupError(
        `cannot read the operator token from ${config.tokenSecretArn}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return new OperatorToken(initial, {
      source,
      clock,
      logger,
      refreshMs: config.tokenRefreshSeconds * 1000,
      overlapMs: config.tokenOverlapSeconds * 1000,
    });
  }
  return OperatorToken.fixed(fixedOperatorToken(config, dataDir, logger));
}

function fixedOperatorToken(config: ServiceConfig, dataDir: string, logger: Logger): string {
  if (config.token) return config.token;
  checkTokenSetting(config);
  if (dataDir === ':memory:') return newToken();
  const file = join(dataDir, 'token');
  const stored = readSecret(file, logger);
  // BOA_TOKEN's rule: a token edited into the file by hand must be one a caller can send.
  if (stored !== undefined && !usableOperatorToken(stored)) {
    throw new ConfigError(
      `${file} holds no usable operator token (${OPERATOR_TOKEN_RULE}): delete it and ` +
        'boa writes a new one, or give the token with BOA_TOKEN or --token',
    );
  }
  if (stored !== undefined) return stored;
  const token = newToken();
  writeFileDurably(file, `${token}\n`);
  return token;
}

/** On AWS the token is never generated: one of the settings must give it (checked before the store). */
export function checkTokenSetting(config: ServiceConfig): void {
  if (config.cloud === 'aws' && !config.token && !config.tokenSecretArn)
    throw new ConfigError(
      'cloud "aws" needs an operator token: set BOA_TOKEN_SECRET_ARN (Secrets Manager), BOA_TOKEN or --token',
    );
}

/**
 * A secret the data dir holds, or undefined when there is none. An empty file is none: a write cut
 * short (a full disk, a crash before the data reached the disk) leaves one, and read as it is it would
 * be an empty operator token nobody can send, or an empty key anyone could derive job tokens with.
 */
function readSecret(file: string, logger: Logger): string | undefined {
  if (!existsSync(file)) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    // EISDIR's message names no file (a bind mount of a host file that did not exist is a directory).
    const { code, message } = error as NodeJS.ErrnoException;
    throw new StoreError(
      `cannot read ${file}: ${code === 'EISDIR' ? 'it is a directory, not a file' : message}`,
    );
  }
  if (text !== '') return text;
  logger.warn(
    { event: 'secret_file_empty', file },
    `${file} is empty (its first write was cut short by a crash or a full disk): a new one is made`,
  );
  return undefined;
}

/**
 * The key executed jobs' tokens are derived from (tokens.ts deriveJobToken): generated once into the
 * data dir, owner-only, like the operator token. A copy of the database alone holds no job token.
 */
export function jobTokenKeyOf(dataDir: string, logger: Logger): Buffer {
  if (dataDir === ':memory:') return randomBytes(32);
  const file = join(dataDir, 'job-token.key');
  const stored = readSecret(file, logger);
  if (stored !== undefined) {
    const key = Buffer.from(stored, 'base64');
    // Never a shorter key than boa makes: job tokens derived from it would be easier to forge.
    if (key.length !== 32)
      throw new StoreError(
        `${file} holds a ${key.length}-byte key, not the 32 bytes boa writes: restore it from the backup, or delete it to make a new one (replicas of jobs submitted before then are refused when they start again)`,
      );
    return key;
  }
  const key = randomBytes(32);
  writeFileDurably(file, `${key.toString('base64')}\n`);
  return key;
}
