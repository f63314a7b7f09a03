import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Logger } from 'pino';
import type { TokenSource } from '../../service/operator-token.ts';
import { OPERATOR_TOKEN_RULE, usableOperatorToken } from '../../core/operator-token-rule.ts';
import { CloudError } from '../errors.ts';
import type { RetryPolicy } from '../retry.ts';
import { realSleep, type Sleep } from '../time.ts';
import { awsClientConfig } from './clients.ts';
import { withRetry } from './retry.ts';

/**
 * Reads may happen while a request waits (a token boa does not know yet): a few quick attempts, not the
 * node pool's patient ones.
 */
export const TOKEN_READ_RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 2_000 };

export interface TokenSecretDeps {
  readonly client?: SecretsManagerClient;
  readonly logger: Logger;
  readonly sleep?: Sleep;
  readonly random?: () => number;
  /** The region of a secret given by name; a secret given by ARN is read in the region the ARN names. */
  readonly region?: string;
}

/**
 * The operator token as the Secrets Manager secret's current version (AWSCURRENT): its SecretString,
 * either the token itself or JSON {"token": "..."}. Read through boa's retry layer.
 */
export function secretTokenSource(secretArn: string, deps: TokenSecretDeps): TokenSource {
  // A secret lives in one region: the one its ARN names, whatever region boa's other clients use (another
  // region's endpoint answers ResourceNotFoundException). A secret given by name is in the configured one.
  const region = (secretArn.startsWith('arn:') ? secretArn.split(':')[3] : undefined) || deps.region;
  const client = deps.client ?? new SecretsManagerClient(awsClientConfig(region ? { region } : {}));
  const ctx = {
    sleep: deps.sleep ?? realSleep,
    random: deps.random ?? Math.random,
    logger: deps.logger,
    policy: TOKEN_READ_RETRY,
  };
  return {
    name: secretArn,
    async read() {
      const out = await withRetry(
        'GetSecretValue',
        () => client.send(new GetSecretValueCommand({ SecretId: secretArn })),
        ctx,
      );
      return tokenFromSecretString(out.SecretString, secretArn);
    },
  };
}

export function tokenFromSecretString(secretString: string | undefined, secretArn: string): string {
  const text = secretString?.trim() ?? '';
  let token = text;
  if (text.startsWith('{')) {
    try {
      token = String((JSON.parse(text) as { token?: unknown }).token ?? '').trim();
    } catch {
      token = '';
    }
  }
  if (!usableOperatorToken(token)) {
    throw new CloudError(
      `secret ${secretArn} holds no usable operator token: its value must be the token ` +
        `(${OPERATOR_TOKEN_RULE}) or JSON {"token": "..."}`,
      'GetSecretValue',
    );
  }
  return token;
}
