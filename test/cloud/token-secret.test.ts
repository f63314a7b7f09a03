import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { secretTokenSource, TOKEN_READ_RETRY } from '../../src/cloud/aws/token-secret.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:boa-operator-token-AbCdEf';
const TOKEN = 'Q2hhbmdlTWVPbmx5SW5UZXN0cy0wMTIzNDU2Nzg5';
const sm = mockClient(SecretsManagerClient);
const named = (name: string, extra: object = {}) => Object.assign(new Error(name), { name, ...extra });

afterEach(() => sm.reset());

function source() {
  const time = fakeTime();
  const logs = captureLogs();
  const read = secretTokenSource(ARN, {
    client: new SecretsManagerClient({ region: 'us-east-1' }),
    logger: logs.logger,
    sleep: time.sleep,
    random: () => 0,
  });
  return { read, time, logs };
}

describe('the operator token from Secrets Manager', () => {
  it('reads the current version of the secret by its ARN, plain or as JSON {"token": ...}', async () => {
    sm.on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: `${TOKEN}\n` })
      .resolvesOnce({
        SecretString: JSON.stringify({ token: TOKEN }),
      });
    const { read } = source();
    expect(await read.read()).toBe(TOKEN);
    expect(await read.read()).toBe(TOKEN);
    const calls = sm.commandCalls(GetSecretValueCommand);
    expect(calls.map((c) => c.args[0].input)).toEqual([{ SecretId: ARN }, { SecretId: ARN }]);
  });

  it('retries throttling a bounded number of times', async () => {
    sm.on(GetSecretValueCommand).rejects(
      named('ThrottlingException', { $metadata: { httpStatusCode: 400 } }),
    );
    const { read, time } = source();
    await expect(read.read()).rejects.toMatchObject({ name: 'AwsCallError', kind: 'throttling' });
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(TOKEN_READ_RETRY.maxAttempts);
    expect(time.sleeps).toHaveLength(TOKEN_READ_RETRY.maxAttempts - 1);
  });

  it('retries a timeout, then reads', async () => {
    sm.on(GetSecretValueCommand).rejectsOnce(named('TimeoutError')).resolves({ SecretString: TOKEN });
    const { read } = source();
    expect(await read.read()).toBe(TOKEN);
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('does not retry access denied, and refuses a value that is no token, naming the secret', async () => {
    sm.on(GetSecretValueCommand).rejects(
      named('AccessDeniedException', { $fault: 'client', $metadata: { httpStatusCode: 400 } }),
    );
    const { read } = source();
    await expect(read.read()).rejects.toThrow(/GetSecretValue failed: AccessDeniedException.*not retried/);
    expect(sm.commandCalls(GetSecretValueCommand)).toHaveLength(1);

    sm.reset();
    sm.on(GetSecretValueCommand).resolves({ SecretString: 'short' });
    await expect(read.read()).rejects.toThrow(`secret ${ARN} holds no usable operator token`);

    // Long enough, and yet no client could send it (found in a trial for the token file).
    sm.reset();
    sm.on(GetSecretValueCommand).resolves({
      SecretString: JSON.stringify({ token: 'abcdefghij\x1bklmnopqrstuv' }),
    });
    await expect(read.read()).rejects.toThrow(
      /holds no usable operator token: .*each visible ASCII \(! to ~\) or Latin-1 \(¡ to ÿ\)/,
    );
  });

  it("reads the secret in the region its ARN names, whatever region boa's other clients use", async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretString: TOKEN });
    const logs = captureLogs();
    // boa's node group in us-west-2, the token's secret (ARN) in us-east-1: a secret is regional, and the
    // us-west-2 endpoint would answer ResourceNotFoundException for it.
    const read = secretTokenSource(ARN, { logger: logs.logger, region: 'us-west-2' });
    expect(await read.read()).toBe(TOKEN);
    const [call] = sm.commandCalls(GetSecretValueCommand);
    const client = call!.thisValue as SecretsManagerClient;
    expect(await client.config.region()).toBe('us-east-1');
    // A secret given by name has no region of its own: the configured one.
    sm.resetHistory();
    await secretTokenSource('boa-operator-token', { logger: logs.logger, region: 'us-west-2' }).read();
    const named = sm.commandCalls(GetSecretValueCommand)[0]!.thisValue as SecretsManagerClient;
    expect(await named.config.region()).toBe('us-west-2');
  });
});
