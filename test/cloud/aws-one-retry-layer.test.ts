import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { DescribeNodegroupCommand, EKSClient, type EKSClientConfig } from '@aws-sdk/client-eks';
import { HttpResponse } from '@smithy/core/protocols';
import { afterEach, describe, expect, it } from 'vitest';
import { awsClientConfig, createAwsClients } from '../../src/cloud/aws/clients.ts';
import { withRetry } from '../../src/cloud/aws/retry.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/**
 * The whole AWS call path, SDK middleware included (aws-sdk-client-mock would replace it): the clients
 * boa builds, with a request handler that answers like the EKS endpoint and counts the HTTP requests.
 * With one retry layer a call is sent exactly maxAttempts times, never the SDK's attempts times boa's.
 */

type Answer = { status: number; errorType?: string; body: object } | { throws: Error };

function fakeEndpoint(answers: Answer[]) {
  let requests = 0;
  const handler = {
    metadata: { handlerProtocol: 'http/1.1' },
    async handle() {
      const answer = answers[Math.min(requests++, answers.length - 1)]!;
      if ('throws' in answer) throw answer.throws;
      const body = Buffer.from(JSON.stringify(answer.body));
      return {
        response: new HttpResponse({
          statusCode: answer.status,
          headers: {
            'content-type': 'application/json',
            ...(answer.errorType ? { 'x-amzn-errortype': answer.errorType } : {}),
          },
          body,
        }),
      };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
  const clients = createAwsClients('us-east-1', {
    requestHandler: handler as unknown as EKSClientConfig['requestHandler'],
    credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
  });
  return { eks: clients.eks, requests: () => requests };
}

const THROTTLED: Answer = {
  status: 429,
  errorType: 'ThrottlingException',
  body: { message: 'Rate exceeded' },
};
const NODEGROUP: Answer = {
  status: 200,
  body: { nodegroup: { nodegroupName: 'gpu', scalingConfig: { minSize: 0, maxSize: 4, desiredSize: 2 } } },
};
const timeout = () =>
  Object.assign(new Error('Connection timed out after 10000 ms'), { name: 'TimeoutError' });

const policy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 };

/** DescribeNodegroup through boa's retry layer, waits recorded instead of waited. */
function describeNodegroup(eks: ReturnType<typeof fakeEndpoint>['eks']) {
  const time = fakeTime();
  const logs = captureLogs();
  const call = () => eks.send(new DescribeNodegroupCommand({ clusterName: 'boa', nodegroupName: 'gpu' }));
  const run = withRetry('DescribeNodegroup', call, {
    sleep: time.sleep,
    random: () => 0,
    logger: logs.logger,
    policy,
  });
  return { run, time, logs };
}

describe('one retry layer for AWS calls', () => {
  it('builds the SDK clients with one attempt each, adaptive rate limiting kept', async () => {
    const { eks } = fakeEndpoint([NODEGROUP]);
    expect(await eks.config.maxAttempts()).toBe(1);
    expect((await eks.config.retryStrategy()) as { mode?: string }).toMatchObject({ mode: 'adaptive' });
  });

  // Slow by design (a few seconds): the SDK's adaptive rate limiter really holds back the later sends.
  it('sends a throttled call exactly maxAttempts times, then fails as throttling', async () => {
    const { eks, requests } = fakeEndpoint([THROTTLED]);
    const { run, time } = describeNodegroup(eks);
    await expect(run).rejects.toMatchObject({ name: 'AwsCallError', kind: 'throttling', attempts: 4 });
    expect(requests()).toBe(4);
    expect(time.sleeps).toEqual([50, 100, 200]);
  });

  it('retries timeouts until an answer comes', async () => {
    const { eks, requests } = fakeEndpoint([{ throws: timeout() }, { throws: timeout() }, NODEGROUP]);
    const { run, logs } = describeNodegroup(eks);
    const out = await run;
    expect(out.nodegroup?.scalingConfig?.desiredSize).toBe(2);
    expect(requests()).toBe(3);
    expect(logs.lines.map((l) => [l.event, l.kind])).toEqual([
      ['aws.retry', 'transient'],
      ['aws.retry', 'transient'],
    ]);
  });

  it('gives up on timeouts after maxAttempts requests', async () => {
    const { eks, requests } = fakeEndpoint([{ throws: timeout() }]);
    const { run } = describeNodegroup(eks);
    await expect(run).rejects.toMatchObject({ kind: 'transient', attempts: 4 });
    expect(requests()).toBe(4);
  });

  it('sends a call refused for good (400 InvalidParameterException) once', async () => {
    const { eks, requests } = fakeEndpoint([
      { status: 400, errorType: 'InvalidParameterException', body: { message: 'bad name' } },
    ]);
    const { run, time } = describeNodegroup(eks);
    await expect(run).rejects.toThrow(/InvalidParameterException: bad name \(not retried \(fatal\)\)/);
    expect(requests()).toBe(1);
    expect(time.sleeps).toEqual([]);
  });

  describe('an endpoint that accepts the request and never answers', () => {
    let server: Server | undefined;
    const sockets = new Set<Socket>();
    afterEach(async () => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });

    it('fails the request with a TimeoutError after requestTimeout, so the loop retries it (no hang)', async () => {
      // A TCP connection that reads the request and never replies (a stuck connection, a NAT drop).
      server = createServer(() => {});
      server.on('connection', (socket) => sockets.add(socket));
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const config = awsClientConfig({
        region: 'us-east-1',
        credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
      });
      // boa's own handler settings, with a shorter timeout so the test does not wait 10 s.
      const eks = new EKSClient({
        ...config,
        requestHandler: { ...config.requestHandler, requestTimeout: 200 },
        endpoint: `http://127.0.0.1:${port}`,
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      });
      const call = eks.send(new DescribeNodegroupCommand({ clusterName: 'boa', nodegroupName: 'gpu' }));
      let timer: NodeJS.Timeout | undefined;
      const stillWaiting = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('still waiting after 3 s')), 3_000);
      });
      try {
        await expect(Promise.race([call, stillWaiting])).rejects.toMatchObject({ name: 'TimeoutError' });
      } finally {
        clearTimeout(timer);
        eks.destroy();
      }
    });
  });
});
