/** Kept pod logs (log-archive.ts): a job restarted many times keeps its newest generations' archives. */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Api, KubeConfig, V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterEach, expect, it } from 'vitest';
import { KEPT_GENERATIONS } from '../../src/cloud/job-folders.ts';
import { PodLogArchive } from '../../src/cloud/kubernetes/log-archive.ts';
import { LABELS } from '../../src/cloud/kubernetes/names.ts';
import { DEFAULT_RETRY } from '../../src/cloud/retry.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const pod = (generation: number): V1Pod => ({
  metadata: {
    name: `boa-1-${generation}-0`,
    labels: { [LABELS.jobId]: '1', [LABELS.generation]: String(generation), [LABELS.rank]: '0' },
  },
});

it(`keeps the archives of a job's newest ${KEPT_GENERATIONS} generations`, async () => {
  const jobsDir = mkdtempSync(join(tmpdir(), 'boa-archive-'));
  dirs.push(jobsDir);
  const logger = pino({ level: 'silent' });
  const api = { readNamespacedPodLog: async () => '2026-11-30T00:00:00Z epoch 1\n' } as unknown as CoreV1Api;
  const retry = { sleep: async () => undefined, random: () => 0, logger, policy: DEFAULT_RETRY };
  const archive = new PodLogArchive(
    jobsDir,
    { kubeConfig: {} as KubeConfig, api, namespace: 'boa', retry, logger },
    1000,
  );
  const last = KEPT_GENERATIONS + 3;
  for (let g = 1; g <= last; g++) await archive.keepEnded(pod(g));
  const kept = readdirSync(join(jobsDir, '1'))
    .map(Number)
    .sort((a, b) => a - b);
  expect(kept).toEqual(Array.from({ length: KEPT_GENERATIONS }, (_, i) => last - KEPT_GENERATIONS + 1 + i));
  expect(readdirSync(join(jobsDir, '1', String(last)))).toEqual(['0.pod.log']);
});
