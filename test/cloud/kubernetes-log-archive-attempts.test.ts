/**
 * Kept pod logs (log-archive.ts) of a pod made again under its name: a pod its node turned away is
 * deleted and created again (readmit.ts), so one name is several pods. What the archive knows of an
 * earlier attempt (its log read and found empty, or reads that failed until given up) is that attempt's:
 * the attempt that ran has its log kept.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { PodLogArchive } from '../../src/cloud/kubernetes/log-archive.ts';
import { LABELS, podName } from '../../src/cloud/kubernetes/names.ts';
import { type FakeKubeApi, startFakeKubeApi } from '../fakes/kube-api/index.ts';

const NS = 'boa-jobs';
const NAME = podName(7, 1, 0);
const ID = { jobId: 7, generation: 1, rank: 0 };

let fake: FakeKubeApi;
let jobsDir: string;
let archive: PodLogArchive;
let node: string;

beforeEach(async () => {
  fake = await startFakeKubeApi();
  node = fake.kubelet.addNode().metadata.name;
  jobsDir = mkdtempSync(join(tmpdir(), 'boa-archive-attempts-'));
  const logger = pino({ level: 'silent' });
  const kubeConfig = fake.kubeConfig();
  const retry = {
    sleep: async () => undefined,
    random: () => 0,
    logger,
    policy: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
  };
  const api = kubeConfig.makeApiClient(CoreV1Api);
  archive = new PodLogArchive(jobsDir, { kubeConfig, api, namespace: NS, retry, logger }, 10_000);
});
afterEach(async () => {
  await archive.close();
  await fake.close();
  rmSync(jobsDir, { recursive: true, force: true });
});

/** A new attempt of the replica's pod under its one name, as the executor (and readmit.ts) makes it. */
function attempt(): V1Pod {
  fake.store.create('pods', NS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: NAME,
      labels: { [LABELS.jobId]: '7', [LABELS.generation]: '1', [LABELS.rank]: '0' },
    } as never,
    spec: { nodeName: node, containers: [{ name: 'train', image: 'repo/train:1' }] },
    status: { phase: 'Pending' },
  });
  return current();
}
const current = () => fake.kubelet.pod(NAME) as unknown as V1Pod;

/** The attempt turned away by its node, as the kubelet's admission leaves it: Failed, never ran. */
function turnedAway(): V1Pod {
  const pod = attempt();
  fake.store.update('pods', NS, NAME, (p) => ({
    ...p,
    status: { phase: 'Failed', reason: 'OutOfnvidia.com/gpu', message: 'no room' },
  }));
  expect(pod.metadata?.uid).toBeTruthy();
  return current();
}

/** The attempt that ran: it wrote its log and ended. */
function ranAndEnded(): V1Pod {
  attempt();
  expect(fake.kubelet.startPods([NAME])).toEqual([NAME]);
  fake.kubelet.writeLog(NAME, 'epoch 1\nloss went NaN\n');
  fake.kubelet.exit(NAME, 1);
  return current();
}

it("keeps the log of the attempt that ran after an earlier attempt's reads failed until given up", async () => {
  const first = turnedAway();
  fake.faults.inject({ status: 500, count: 2, match: (r) => r.path.endsWith('/log') });
  // Read as it went (a real API server refuses a never-run container's log), once a pass, given up.
  await archive.keepEnded(first);
  await archive.keepEnded(first);
  expect(archive.has(first)).toBe(true);
  expect(fake.faults.injected).toBe(2);
  fake.store.remove('pods', NS, NAME);

  const second = ranAndEnded();
  expect(second.metadata?.uid).not.toBe(first.metadata?.uid);
  expect(archive.has(second)).toBe(false);
  expect(archive.keptWhole(second)).toBe(false);
  await archive.keepEnded(second);
  expect(archive.ended(ID)).toMatch(/ epoch 1\n.* loss went NaN\n$/);
});

it('follows the attempt that runs when it is stopped, after an earlier attempt was kept with no log', async () => {
  const first = turnedAway();
  // Its log: nothing, as the fake answers for a pod that never ran; nothing is written for it.
  await archive.keepEnded(first);
  expect(archive.has(first)).toBe(true);
  fake.store.remove('pods', NS, NAME);

  attempt();
  expect(fake.kubelet.startPods([NAME])).toEqual([NAME]);
  fake.kubelet.writeLog(NAME, 'epoch 1\n');
  const running = current();
  // Deleted by someone else while it runs: pod-stops.ts follows it unless the archive has it already.
  expect(archive.has(running)).toBe(false);
  await archive.keepStopping(running);
  fake.kubelet.writeLog(NAME, 'SIGTERM: checkpoint saved\n');
  fake.kubelet.exit(NAME, 143);
  // Kept once the follow has seen the container end.
  for (let i = 0; i < 1000 && archive.read(ID) === undefined; i++)
    await new Promise((r) => setTimeout(r, 20));
  expect(archive.read(ID)).toMatch(/ epoch 1\n.* SIGTERM: checkpoint saved\n$/);
});
