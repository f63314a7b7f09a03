import type { CoreV1Api, V1EnvVar, V1Secret, V1Service } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ReplicaSpec } from '../../service/ports.ts';
import type { RetryContext } from '../retry.ts';
import type { KubernetesExecutorConfig } from './config.ts';
import { createOnce } from './create-once.ts';
import { jobLabels, ownedByService, tokenSecretName } from './names.ts';

/** The job's bearer token for boa's API: kept out of the pod spec, which anyone who may get pods reads. */
export const TOKEN_ENV = 'BOA_JOB_TOKEN';
/** Its key in the job's Secret. */
export const TOKEN_KEY = 'token';

/** The replica's environment, boa's over the workload's. */
export function replicaEnv(replica: ReplicaSpec): Record<string, string> {
  return { ...replica.workload.env, ...replica.env };
}

/**
 * The Secret holding the job's token, labelled and owned like its pods, so deleting the job's Service
 * collects it too. Immutable: a job's token never changes (derived from its seed and boa's key; a new key
 * gets the job's replicas refused anyway), so there is nothing to update, and the kubelet need not watch
 * it. Undefined for a replica without a token.
 */
export function tokenSecretManifest(
  replica: ReplicaSpec,
  owner: { uid: string },
  config: KubernetesExecutorConfig,
): V1Secret | undefined {
  const token = replicaEnv(replica)[TOKEN_ENV];
  if (!token) return undefined;
  const { jobId } = replica;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    immutable: true,
    metadata: {
      name: tokenSecretName(jobId, owner.uid),
      namespace: config.namespace,
      labels: jobLabels(jobId),
      ownerReferences: ownedByService(jobId, owner.uid),
    },
    data: { [TOKEN_KEY]: Buffer.from(token, 'utf8').toString('base64') },
  };
}

/**
 * A container's env, sorted: the token read from the Secret of the job's Service (`serviceUid`), every
 * other variable a plain value.
 */
export function containerEnv(
  jobId: number,
  serviceUid: string,
  env: Readonly<Record<string, string>>,
): V1EnvVar[] {
  const secret = tokenSecretName(jobId, serviceUid);
  return Object.entries(env)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) =>
      name === TOKEN_ENV && value
        ? { name, valueFrom: { secretKeyRef: { name: secret, key: TOKEN_KEY } } }
        : { name, value },
    );
}

/**
 * Creates the job's token Secret (createOnce) each time the job's pods are to be created, so one deleted
 * by hand is back for the next pods (those running read it when they started). Owned by its Service: one
 * deleted meanwhile, the Secret is collected with it, as its pods are. Returns why the API server
 * refused it.
 */
export function ensureTokenSecret(
  api: CoreV1Api,
  config: KubernetesExecutorConfig,
  retry: RetryContext,
  logger: Logger,
  replica: ReplicaSpec,
  service: V1Service,
): Promise<string | undefined> {
  const body = tokenSecretManifest(replica, { uid: service.metadata!.uid! }, config);
  if (!body) return Promise.resolve(undefined);
  const namespace = config.namespace;
  const create = () => api.createNamespacedSecret({ namespace, body });
  const object = { what: 'token secret', event: 'secret', jobId: replica.jobId, name: body.metadata!.name! };
  return createOnce({ ...object, create }, retry, logger);
}
