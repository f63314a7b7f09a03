import { EC2ServiceException } from '@aws-sdk/client-ec2';
import {
  InvalidParameterException,
  ResourceInUseException,
  ServerException,
  ThrottlingException,
} from '@aws-sdk/client-eks';
import { describe, expect, it } from 'vitest';
import { AwsCallError, classifyAwsError, withRetry } from '../../src/cloud/aws/retry.ts';
import { backoffDelay } from '../../src/cloud/retry.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

const $metadata = {};
const named = (name: string, extra: object = {}) => Object.assign(new Error(name), { name, ...extra });

describe('classifyAwsError', () => {
  it.each([
    ['EKS ThrottlingException', new ThrottlingException({ message: 'x', $metadata }), 'throttling'],
    ['TooManyRequestsException', named('TooManyRequestsException'), 'throttling'],
    [
      'EC2 RequestLimitExceeded',
      new EC2ServiceException({ name: 'RequestLimitExceeded', $fault: 'client', $metadata, message: 'x' }),
      'throttling',
    ],
    ['HTTP 429', named('SomethingElse', { $metadata: { httpStatusCode: 429 } }), 'throttling'],
    ['SDK TimeoutError', named('TimeoutError'), 'transient'],
    ['socket ETIMEDOUT', named('Error', { code: 'ETIMEDOUT' }), 'transient'],
    ['HTTP 503', named('Unknown', { $metadata: { httpStatusCode: 503 } }), 'transient'],
    ['EKS ServerException', new ServerException({ message: 'x', $metadata }), 'transient'],
    ['ResourceInUseException', new ResourceInUseException({ message: 'x', $metadata }), 'in-use'],
    ['InvalidParameterException', new InvalidParameterException({ message: 'x', $metadata }), 'fatal'],
    ['AccessDenied (403)', named('AccessDeniedException', { $metadata: { httpStatusCode: 403 } }), 'fatal'],
    ['a thrown string', 'boom', 'fatal'],
  ])('%s is %s', (_label, error, kind) => {
    expect(classifyAwsError(error)).toBe(kind);
  });
});

describe('backoffDelay', () => {
  const policy = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 1_000 };

  it('doubles per attempt up to the cap, jittered within the upper half', () => {
    for (let attempt = 1; attempt <= 8; attempt++) {
      const step = Math.min(1_000, 100 * 2 ** (attempt - 1));
      expect(backoffDelay(attempt, policy, () => 0)).toBe(step / 2);
      expect(backoffDelay(attempt, policy, () => 0.999_999)).toBe(step);
    }
  });
});

describe('withRetry', () => {
  const policy = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 };

  it('retries transient errors and returns the first success', async () => {
    const time = fakeTime();
    const logs = captureLogs();
    let calls = 0;
    const result = await withRetry(
      'Op',
      async () => {
        if (++calls < 3) throw named('TimeoutError');
        return 'ok';
      },
      { sleep: time.sleep, random: () => 0, logger: logs.logger, policy },
    );
    expect(result).toBe('ok');
    expect(time.sleeps).toEqual([50, 100]);
    expect(logs.lines.map((l) => [l.event, l.operation, l.kind, l.attempt])).toEqual([
      ['aws.retry', 'Op', 'transient', 1],
      ['aws.retry', 'Op', 'transient', 2],
    ]);
  });

  it('stops after maxAttempts with an AwsCallError that keeps the kind and the cause', async () => {
    const time = fakeTime();
    const cause = named('Throttling');
    const failing = withRetry(
      'Op',
      async () => {
        throw cause;
      },
      { sleep: time.sleep, random: () => 0, logger: captureLogs().logger, policy },
    );
    await expect(failing).rejects.toMatchObject({
      name: 'AwsCallError',
      kind: 'throttling',
      attempts: 3,
      cause,
      message: 'Op failed: Throttling: Throttling (gave up after 3 attempts)',
    });
    await expect(failing).rejects.toBeInstanceOf(AwsCallError);
  });

  it('does not retry in-use or fatal errors: the caller decides', async () => {
    for (const error of [
      new ResourceInUseException({ message: 'busy', $metadata }),
      named('ValidationError'),
    ]) {
      const time = fakeTime();
      let calls = 0;
      const run = withRetry(
        'Op',
        async () => {
          calls++;
          throw error;
        },
        { sleep: time.sleep, random: () => 0, logger: captureLogs().logger, policy },
      );
      await expect(run).rejects.toThrow(/not retried/);
      expect(calls).toBe(1);
      expect(time.sleeps).toEqual([]);
    }
  });
});
