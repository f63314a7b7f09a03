import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { ConfigError, resolveConfig } from '../../src/service/config.ts';
import { configFromEnv } from '../../src/service/config-env.ts';
import { startFailure } from '../../src/service/startup.ts';
import { ManualClock } from './harness.ts';

/**
 * The operator token read from a Secrets Manager secret at start (BOA_TOKEN_SECRET_ARN) and rotated
 * while boa runs: the whole service through its HTTP app, the SDK mocked with aws-sdk-client-mock.
 */
const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:boa-operator-token-AbCdEf';
const OLD = 'old-operator-token-0123456789';
const NEW = 'new-operator-token-0123456789';
const sm = mockClient(SecretsManagerClient);
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  sm.reset();
});

async function boot(env: Record<string, string> = {}) {
  const clock = new ManualClock();
  const config = resolveConfig({ dataDir: ':memory:' }, configFromEnv({ BOA_TOKEN_SECRET_ARN: ARN, ...env }));
  const boa = await bootService(config, {
    clock,
    computer: new InlinePlanComputer(),
    logger: pino({ level: 'silent' }),
    dataDir: ':memory:',
  });
  closers.push(boa.close);
  const get = async (path: string, token: string) =>
    (await boa.app.request(path, { headers: { authorization: `Bearer ${token}` } })).status;
  return { boa, clock, get };
}

describe('operator token from Secrets Manager', () => {
  it('is read at start; a rotation is taken without a restart, the old token accepted for the overlap', async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretString: OLD });
    const { boa, clock, get } = await boot();
    expect(boa.token).toBe(OLD);
    expect(await get('/v1/jobs', OLD)).toBe(200);
    expect(await get('/v1/jobs', 'some-other-token-0123456789')).toBe(401);

    // The rotation Lambda moved AWSCURRENT to a new value. A client that already has it gets in once
    // boa re-reads (a token it does not know, at most every 30 s).
    sm.on(GetSecretValueCommand).resolves({ SecretString: NEW });
    clock.advance(31);
    expect(await get('/v1/jobs', NEW)).toBe(200);
    expect(await get('/metrics', NEW)).toBe(200);
    // The previous token still works during the overlap (default 15 minutes), then no more.
    expect(await get('/v1/jobs', OLD)).toBe(200);
    clock.advance(15 * 60);
    expect(await get('/v1/jobs', OLD)).toBe(401);
    expect(await get('/metrics', OLD)).toBe(401);
    expect(await get('/v1/jobs', NEW)).toBe(200);
  });

  it('a rotated operator token works on a job route too (not mistaken for a wrong job token)', async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretString: OLD });
    const { boa, clock, get } = await boot();
    const submit = await boa.app.request('/v1/jobs', {
      method: 'POST',
      headers: { authorization: `Bearer ${OLD}`, 'content-type': 'application/json' },
      body: JSON.stringify({ class: boa.service.state.classes.keys().next().value, name: 'j' }),
    });
    expect(submit.status).toBe(201);
    const { job } = (await submit.json()) as { job: { id: number } };
    sm.on(GetSecretValueCommand).resolves({ SecretString: NEW });
    clock.advance(31);
    expect(await get(`/v1/jobs/${job.id}`, NEW)).toBe(200);
    expect(await get(`/v1/jobs/${job.id}`, 'wrong-token-0123456789')).toBe(401);
  });

  it("a rotated operator token on a job that does not exist is refreshed and gets the route's 404", async () => {
    sm.on(GetSecretValueCommand).resolves({ SecretString: OLD });
    const { clock, get } = await boot();
    const reads = () => sm.commandCalls(GetSecretValueCommand).length;
    const atStart = reads();
    sm.on(GetSecretValueCommand).resolves({ SecretString: NEW });
    clock.advance(31);
    const res = await get('/v1/jobs/999', NEW);
    expect(res).toBe(404);
    // The secret was re-read for this request, so the new token is now known without another read.
    expect(reads()).toBe(atStart + 1);
    expect(await get('/v1/jobs', NEW)).toBe(200);
    expect(reads()).toBe(atStart + 1);
    // A wrong token on a missing job is a 401, as on a job that exists.
    clock.advance(31);
    expect(await get('/v1/jobs/999', 'wrong-token-0123456789')).toBe(401);
  });

  it('an unreadable secret stops the start with one line naming the secret (exit 1)', async () => {
    sm.on(GetSecretValueCommand).rejects(
      Object.assign(new Error('User is not authorized to perform secretsmanager:GetSecretValue'), {
        name: 'AccessDeniedException',
        $fault: 'client',
      }),
    );
    const failed = await boot().catch((error: unknown) => error);
    const { line, exitCode } = startFailure(failed);
    expect(exitCode).toBe(1);
    expect(line).toContain(`boa: cannot read the operator token from ${ARN}: GetSecretValue failed`);
    expect(line).toContain('AccessDeniedException');
  });

  it('refuses both a token and a secret, and a malformed ARN, naming the variables', () => {
    expect(() => resolveConfig(configFromEnv({ BOA_TOKEN_SECRET_ARN: ARN, BOA_TOKEN: OLD }))).toThrow(
      ConfigError,
    );
    expect(() => resolveConfig(configFromEnv({ BOA_TOKEN_SECRET_ARN: ARN, BOA_TOKEN: OLD }))).toThrow(
      /BOA_TOKEN_SECRET_ARN/,
    );
    expect(() => resolveConfig(configFromEnv({ BOA_TOKEN_SECRET_ARN: 'boa-token' }))).toThrow(
      /BOA_TOKEN_SECRET_ARN must be a Secrets Manager secret ARN/,
    );
  });
});
