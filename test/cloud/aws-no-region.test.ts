import { DescribeNodegroupCommand, type EKSClientConfig } from '@aws-sdk/client-eks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAwsClients } from '../../src/cloud/aws/clients.ts';
import { withRetry } from '../../src/cloud/aws/retry.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/**
 * boa on cloud "aws" with no region anywhere the SDK looks (no AWS_REGION, no aws.region, no profile
 * region: a laptop run) fails every call before it is sent, with the SDK's bare "Region is missing",
 * every tick. The error says where to set one. Real SDK clients (aws-sdk-client-mock would skip the
 * region's resolution), with a request handler that counts what reaches it.
 */

const REGION_SOURCES = ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_CONFIG_FILE'] as const;
let saved: Record<string, string | undefined> = {};
beforeEach(() => {
  saved = Object.fromEntries(REGION_SOURCES.map((name) => [name, process.env[name]]));
  for (const name of REGION_SOURCES) delete process.env[name];
  // No profile file either, whatever the machine running the test has in ~/.aws/config.
  process.env.AWS_CONFIG_FILE = '/nonexistent/boa-test-aws-config';
});
afterEach(() => {
  for (const name of REGION_SOURCES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

describe('AWS clients with no region', () => {
  it('fail at once, sending nothing, naming AWS_REGION and aws.region', async () => {
    let requests = 0;
    const handler = {
      metadata: { handlerProtocol: 'http/1.1' },
      handle() {
        requests++;
        throw new Error('a request was sent without a region');
      },
      updateHttpClientConfig() {},
      httpHandlerConfigs: () => ({}),
      destroy() {},
    };
    const { eks } = createAwsClients(undefined, {
      requestHandler: handler as unknown as EKSClientConfig['requestHandler'],
      credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
    });
    const time = fakeTime();
    const run = withRetry(
      'DescribeNodegroup',
      () => eks.send(new DescribeNodegroupCommand({ clusterName: 'boa', nodegroupName: 'gpu' })),
      {
        sleep: time.sleep,
        random: () => 0,
        logger: captureLogs().logger,
        policy: { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 },
      },
    );
    await expect(run).rejects.toMatchObject({
      name: 'AwsCallError',
      kind: 'fatal',
      attempts: 1,
      message:
        "DescribeNodegroup failed: Error: Region is missing (not retried (fatal)): boa's AWS clients have no " +
        "region: set AWS_REGION, or aws.region in boa's config file, to the cluster's region",
    });
    expect(requests).toBe(0);
    expect(time.sleeps).toEqual([]);
  });
});
