import type { V1Pod } from '@kubernetes/client-node';
import { kubernetesConfig } from '../../src/cloud/kubernetes/config.ts';
import { rank0Address } from '../../src/cloud/kubernetes/names.ts';
import { podManifest } from '../../src/cloud/kubernetes/pods.ts';
import type { ReplicaSpec } from '../../src/service/ports.ts';

export const config = kubernetesConfig({
  namespace: 'train',
  serviceAccountName: 'trainer',
  imagePullSecrets: ['ecr-pull', 'ghcr-pull'],
  terminationGraceSeconds: 90,
});

/** Rank 1 of job 42's generation 3, two GPUs, with every workload field a pod carries. */
export const replica: ReplicaSpec = {
  jobId: 42,
  generation: 3,
  rank: 1,
  node: 'ip-10-0-1-7.ec2.internal',
  gpus: 2,
  workload: {
    image: 'repo/train:1.0',
    command: ['python3', 'train.py'],
    args: ['--epochs', '90'],
    env: { USER_VAR: 'x', WORLD_SIZE: 'user value loses' },
    cpuPerGpu: 3.5,
    memoryPerGpu: '16Gi',
    checkpoint: { volumeClaim: 'ckpt' },
  },
  env: { WORLD_SIZE: '6', NODE_RANK: '1', MASTER_ADDR: rank0Address(42, 'train'), MASTER_PORT: '29500' },
};

/** When a deleted pod's grace ends (its deletionTimestamp): SIGKILL at the latest, reported as killAt. */
export const DELETION = Date.parse('2026-11-27T06:20:00Z');
/** The replica's pod as boa creates it, before any status. */
export const base: V1Pod = podManifest(replica, { uid: 'u' }, config);
/** The replica's pod with this status; `deleting` marks it deleted (its grace ending at DELETION). */
export const withStatus = (status: V1Pod['status'], deleting = false): V1Pod => ({
  ...base,
  metadata: { ...base.metadata, ...(deleting ? { deletionTimestamp: new Date(DELETION) } : {}) },
  status,
});
/** The replica's identity, as every status of it reports it. */
export const ids = { jobId: 42, generation: 3, rank: 1, node: 'ip-10-0-1-7.ec2.internal' };
