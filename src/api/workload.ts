import { z } from '@hono/zod-openapi';
import { BOA_SET_ENV_RULE, isBoaSetEnv } from '../service/boa-env.ts';
import { positiveUpTo } from './bounds.ts';
import { strictBody } from './strict.ts';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A Kubernetes quantity such as 16Gi, 512Mi or 1e9. */
const QUANTITY = /^[0-9]+(\.[0-9]+)?([eE][0-9]+|[KMGTPE]i?|[kmun])?$/;
const LIMIT = 4096;

/**
 * A string a process can be given: no NUL, which no program's arguments, environment or path can hold
 * (spawn refuses it), so a job carrying one could never start and would hold its GPUs until it failed.
 */
const passable = (what: string) =>
  z
    .string()
    .max(LIMIT, `${what} is longer than ${LIMIT} characters`)
    .refine((value) => !value.includes('\0'), `${what} must not contain a NUL character (\\u0000)`);

const nonEmpty = (what: string) => passable(what).min(1, `${what} must not be empty`);

/**
 * What a job runs (src/service/ports.ts Workload), validated at submission: each refusal names the
 * field, e.g. `workload.command`. Whether the executable exists is checked by the executor (local).
 */
export const WorkloadSchema = strictBody({
  image: nonEmpty('image')
    .regex(/^\S+$/, 'image must be an image reference without spaces, e.g. ghcr.io/org/train:1.2')
    .optional()
    .openapi({ description: 'container image (Kubernetes); ignored by the local executor' }),
  command: z
    .array(nonEmpty('each command word'))
    .min(1, 'command must name the program to run, e.g. ["python", "train.py"]')
    .max(256)
    .openapi({ example: ['python', 'train.py', '--epochs', '90'] }),
  args: z.array(passable('each argument')).max(256).optional(),
  env: z
    .record(
      z
        .string()
        .regex(ENV_NAME, 'environment variable names are letters, digits and _, not starting with a digit')
        .refine((name) => !isBoaSetEnv(name), {
          error: (issue) =>
            `${String(issue.input)} cannot be given: ${BOA_SET_ENV_RULE} (WORLD_SIZE is the width boa chooses)`,
        }),
      z
        .string({ error: 'environment values must be strings' })
        .max(LIMIT, `each environment value is longer than ${LIMIT} characters`)
        .refine(
          (value) => !value.includes('\0'),
          'environment values must not contain a NUL character (\\u0000)',
        ),
    )
    .refine((env) => Object.keys(env).length <= 256, 'at most 256 environment variables')
    .optional(),
  workingDir: nonEmpty('workingDir')
    .optional()
    .openapi({ description: "the replicas' working directory (default: the service's, or the image's)" }),
  cpuPerGpu: positiveUpTo(1024).optional(),
  memoryPerGpu: z
    .string()
    .max(64, 'memoryPerGpu is longer than 64 characters')
    .regex(QUANTITY, 'memoryPerGpu must be a Kubernetes quantity such as 16Gi')
    .optional(),
  checkpoint: strictBody({
    volumeClaim: nonEmpty('volumeClaim').optional(),
    uri: nonEmpty('uri').optional(),
  })
    .refine((c) => c.volumeClaim !== undefined || c.uri !== undefined, 'give volumeClaim or uri')
    // With both, the pod's BOA_CHECKPOINT_DIR is the claim's mount and the uri was dropped unsaid.
    .refine(
      (c) => c.volumeClaim === undefined || c.uri === undefined,
      'give volumeClaim or uri, not both: a job keeps its checkpoints in one place',
    )
    .optional(),
}).openapi('Workload');

/**
 * What a registration accepts but this service will not use (a newcomer's --image on a local service
 * was taken and silently ignored): a note with the answer, not a refusal, so one workload serves both.
 * And a job registered without a workload: self-launched, which the CLI asks for by name
 * (--self-launched) and the API took in silence. Said, not refused: the API documents the workload as
 * optional, and the simulator's replay client and the bench scripts register such jobs on purpose.
 */
export function workloadWarning(
  executor: string | undefined,
  workload: { image?: string } | undefined,
  leaseSeconds: number,
) {
  if (workload === undefined)
    return (
      'no workload: the job is self-launched. boa starts nothing for it but gives it GPUs (paid) from the' +
      ` next tick; its launcher polls its allocation with this token, and unpolled for ${leaseSeconds} s` +
      ' (leaseSeconds) the job is lost and its GPUs freed. For boa to run it, register it with a workload'
    );
  if (executor === 'local' && workload.image !== undefined)
    return (
      `the local executor runs the command on this machine and ignores the image ${JSON.stringify(workload.image)}` +
      ' (--image, workload.image: used by the Kubernetes executor)'
    );
  return null;
}
