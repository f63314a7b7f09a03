import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { describeIssue, describeUnknownKeys, fromSource } from './config-sources.ts';
import { instanceIssues, withInstanceDefaults, type WithInstanceDefaults } from './config-instance.ts';
import { planningIssues, planningSettings } from './config-planning.ts';
import { positive, timerSetting } from './config-number.ts';
import { BOUNDS } from '../api/bounds.ts';
import { OPERATOR_TOKEN_MIN, sendableToken } from '../core/operator-token-rule.ts';

/** The slowest tick anywhere: an hour (main.ts runs it on setInterval). */
export const MAX_TICK_SECONDS = 3600;

const PORT_RANGE = 'port must be between 1 and 65535 (0, a random port, is not supported)';

/**
 * Service configuration: defaults < config file (JSON) < environment (BOA_*) < command-line flags.
 * Validated once at start; an error names the setting and where it came from.
 */
export const configSchema = z
  .strictObject({
    // Not 0 (a random port): replicas are told config.port in BOA_URL, and the CLI needs to know it.
    port: z
      .number({ error: 'port must be a number' })
      .int('port must be a whole number')
      .min(1, PORT_RANGE)
      .max(65535, PORT_RANGE)
      .default(8080),
    // Not empty: Node binds an empty host on every address, and the URLs made of it (BOA_URL) are broken.
    host: z
      .string()
      .trim()
      .min(1, 'host must be an address (127.0.0.1, 0.0.0.0 for every address), not empty')
      .default('127.0.0.1'),
    dataDir: z.string().min(1).default('./data'),
    cloud: z.enum(['local', 'aws']).default('local'),
    /** Operator bearer token; in local mode one is generated into the data dir when absent. */
    token: z
      .string()
      .min(OPERATOR_TOKEN_MIN, `token must be at least ${OPERATOR_TOKEN_MIN} characters`)
      // A bearer token is one word of visible ASCII on the wire: one with a space or a trailing newline
      // (a Secret's value, an env file) could never be matched, and one with a control character could
      // not even be sent (core/operator-token-rule.ts).
      .refine(
        sendableToken,
        'token must be visible ASCII (! to ~) or Latin-1 (¡ to ÿ): no spaces, line breaks (a trailing newline, say) or control characters',
      )
      .optional(),
    /** The operator token from this AWS Secrets Manager secret instead (EKS), re-read so rotation needs no restart. */
    tokenSecretArn: z
      .string()
      .regex(
        /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/,
        'tokenSecretArn must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)',
      )
      .optional(),
    /** How often the secret is re-read (a rotation takes effect within this). */
    tokenRefreshSeconds: timerSetting(
      'tokenRefreshSeconds',
      86_400,
      'seconds (a day)',
      'a rotated token must be read again within a day',
    ).default(300),
    /** How long a rotated-out operator token is still accepted. */
    tokenOverlapSeconds: z.number().min(0).max(86_400).default(900),
    profiles: z.string().optional(),
    // Each tick starts jobs and frees nodes: a finished job's nodes are paid until the next one.
    tickSeconds: timerSetting(
      'tickSeconds',
      MAX_TICK_SECONDS,
      'seconds (an hour)',
      "a finished job's nodes are paid until the next tick",
    ).default(60),
    // Budget and profile changes replan at once; the timer follows the arrival rates. Not a Node timer
    // (the planner compares the time at each tick): a day is a policy bound, not the timer limit's.
    calculatorMinutes: timerSetting(
      'calculatorMinutes',
      1440,
      'minutes (a day)',
      'the plan follows the arrival rates of the 24-hour rate window',
    ).default(15),
    ...planningSettings,
    /**
     * The starting budget (GPU-hours per hour), stored at the first start only: PUT /v1/budget's bounds
     * here, its floor (one job of the cheapest class) once the profiles are known (config-budget.ts).
     */
    budget: z
      .number({ error: 'budget must be a number' })
      // As PUT /v1/budget says it of 0: "above 0" alone read as if 0.5 were accepted (a newcomer trial).
      .positive(
        'budget must be a number of GPU-hours per hour of at least the smallest accepted budget (what one ' +
          "job of the cheapest class needs on whole nodes: a node's GPUs with the default classes)",
      )
      .max(
        BOUNDS.budget,
        `budget must be above 0 and at most ${BOUNDS.budget} GPU-hours per hour, as PUT /v1/budget allows`,
      )
      .optional(),
    /** Prior arrival rates per class, jobs/hour; classes without one start at 0 and are learned. */
    priorRates: z.record(z.string(), z.number().nonnegative()).default({}),
    /** GPUs per node; unset: the instance type's (config-instance.ts). */
    gpusPerNode: z.number().int().positive().optional(),
    instanceType: z.string().min(1).default('g4dn.12xlarge'),
    /**
     * Price of one node per hour, for the $ figures; unset: the instance type's on-demand price in
     * us-east-1 (core/instance-types.ts), or none for a type without one.
     */
    nodePricePerHour: z
      .number({ error: 'nodePricePerHour must be a number' })
      .nonnegative('nodePricePerHour must be >= 0 (dollars per node-hour)')
      .optional(),
    /** Hard cap on nodes, below the node group's own maximum. */
    maxNodes: z.number().int().nonnegative().optional(),
    /**
     * The budget guard's silence in minutes (the CDK app sets it when it deploys the guard Lambda): once
     * boa's heartbeat has not reached CloudWatch for most of it, boa holds itself to the guard's rule
     * (heartbeat-hold.ts), so a boa alive with only its metrics failing never fights the guard.
     */
    guardMinutes: z
      .number({ error: 'guardMinutes must be a number' })
      .positive("guardMinutes must be > 0 (the budget guard's silence, in minutes)")
      .optional(),
    solver: z.enum(['exact', 'paper']).default('exact'),
    /** What runs jobs submitted with a workload; default: local with cloud local, kubernetes with aws. */
    executor: z.enum(['local', 'kubernetes']).optional(),
    /** SIGTERM (pod deletion) to SIGKILL when a job's replicas stop: time to checkpoint. */
    // The Kubernetes log archive follows a stopping pod for the grace and a minute, on a timer.
    terminationGraceSeconds: z
      .number({ error: 'terminationGraceSeconds must be a number' })
      .nonnegative('terminationGraceSeconds must be from 0 to 3600 seconds (an hour)')
      .max(
        3600,
        'terminationGraceSeconds must be at most 3600 seconds (an hour): time to checkpoint, while the GPUs are paid',
      )
      .default(120),
    /** Restarts of a failing executed job before it is `failed`. */
    maxRestarts: z.number().int().nonnegative().default(3),
    /** First restart delay; doubles with every restart (capped at 10 minutes). */
    restartBackoffSeconds: z.number().nonnegative().default(10),
    /**
     * A replica stopped from outside after running less than this is counted as a failure (a restart,
     * with its backoff), not resumed for free: something that stops a job as soon as it starts (a node
     * that keeps evicting it, a job that signals its own supervisor) must not resume it forever.
     */
    interruptedMinRunSeconds: z.number().nonnegative().default(60),
    /**
     * A generation whose replicas are not all running this long after boa first asked for them has
     * failed (a restart, with its backoff): a pod that never starts (a volume that cannot attach, a
     * pull that never succeeds, a create the API server keeps failing) must not hold its GPUs for
     * ever. Counted from when this service asked (a restart of boa starts it again). 0: no deadline.
     */
    startTimeoutSeconds: z.number().nonnegative().default(900),
    /** Running replicas are checked this often between ticks, so an exit is seen within it. */
    replicaCheckSeconds: timerSetting(
      'replicaCheckSeconds',
      MAX_TICK_SECONDS,
      'seconds (an hour)',
      'every tick checks the replicas as well',
    ).default(5),
    /** An ended job's kept logs (both executors') are deleted this many days after it ended; 0: kept for good. */
    jobLogRetentionDays: z
      .number({ error: 'jobLogRetentionDays must be a number' })
      .nonnegative('jobLogRetentionDays must be >= 0 (0: logs kept for good)')
      .default(30),
    /**
     * A followed log that asks for it (boa's CLI and dashboard do) gets a keepalive after this long
     * without a line, so its reader can tell a quiet job from a connection a NAT or proxy dropped
     * without a word, and a proxy's idle timeout does not cut it.
     */
    logKeepaliveSeconds: z
      .number({ error: 'logKeepaliveSeconds must be a number' })
      .positive(
        'logKeepaliveSeconds must be more than 0 (seconds between keepalives of a quiet followed log)',
      )
      .max(300, 'logKeepaliveSeconds must be at most 300: a reader waits 3 of them before it reconnects')
      .default(15),
    /** A self-launched job silent (no poll, no report) this long is `lost` and its GPUs freed. */
    leaseSeconds: positive('leaseSeconds').default(600),
    /** The URL replicas reach the service at (BOA_URL); default http://<host>:<port>. */
    publicUrl: z.url().optional(),
    local: z
      .strictObject({
        maxNodes: z.number().int().positive().default(64),
        bootSeconds: z.number().nonnegative().default(90),
        releaseSeconds: z.number().nonnegative().default(30),
      })
      .default({ maxNodes: 64, bootSeconds: 90, releaseSeconds: 30 }),
    aws: z
      .strictObject({
        region: z.string().optional(),
        clusterName: z.string().min(1),
        nodegroupName: z.string().min(1),
      })
      .optional(),
    /** The Kubernetes executor's pods (docs/kubernetes.md): where they run and as whom. */
    kubernetes: z
      .strictObject({
        namespace: z
          .string()
          .regex(
            /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
            'kubernetes.namespace must be a DNS label, e.g. boa-jobs',
          )
          .default('boa-jobs'),
        serviceAccountName: z.string().min(1).optional(),
        imagePullSecrets: z.array(z.string().min(1)).default([]),
        /** An ended pod of a job no longer run is kept this long after its exit, for its log. */
        endedPodRetentionSeconds: z.number().nonnegative().default(3600),
      })
      .optional(),
    /** Node group behaviour (src/service/nodes, docs/nodes.md). */
    nodes: z
      .strictObject({
        /** A node not ready for jobs this long after launch is terminated (never joined, no GPUs). */
        provisionSeconds: z.number().positive().default(900),
        /** A node that was ready keeps its jobs this long while it is not (NotReady, no GPUs); 0: none. */
        // Kubernetes evicts boa's pods from a not-ready node after 300 s (its default tolerations):
        // a longer grace would keep allocations to pods that are gone.
        notReadyGraceSeconds: z
          .number()
          .nonnegative()
          .max(
            300,
            'nodes.notReadyGraceSeconds must be at most 300: Kubernetes evicts pods from a not-ready node after 300 s',
          )
          .default(300),
        /** First wait after instances fail to launch (capacity); doubles per failure up to the max. */
        capacityBackoffSeconds: z.number().positive().default(60),
        capacityBackoffMaxSeconds: z.number().positive().default(1800),
      })
      .default({
        provisionSeconds: 900,
        notReadyGraceSeconds: 300,
        capacityBackoffSeconds: 60,
        capacityBackoffMaxSeconds: 1800,
      }),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((c, ctx) => {
    for (const issue of instanceIssues(c)) ctx.addIssue({ code: 'custom', ...issue });
    if (c.token !== undefined && c.tokenSecretArn !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['tokenSecretArn'],
        message: 'tokenSecretArn and token are both set: give the operator token one way only',
      });
    }
    for (const issue of planningIssues(c)) ctx.addIssue({ code: 'custom', ...issue });
    // The Heartbeat published every tick is what the silence alarm and the budget guard outside boa
    // read (infra/budget-guard.ts): with the shortest guardMinutes (5), slower ticks would read as boa
    // gone, and the guard would shrink a node group boa runs.
    if (c.cloud === 'aws' && c.tickSeconds > MAX_AWS_TICK_SECONDS) {
      ctx.addIssue({
        code: 'custom',
        path: ['tickSeconds'],
        message:
          `tickSeconds must be at most ${MAX_AWS_TICK_SECONDS} with cloud "aws", got ${c.tickSeconds}: each tick ` +
          "publishes the Heartbeat that the CDK app's silence alarm and budget guard read (guardMinutes from 5)",
      });
    }
    if (c.cloud === 'aws' && !c.aws) {
      ctx.addIssue({
        code: 'custom',
        path: ['aws'],
        message:
          'cloud "aws" needs aws.clusterName and aws.nodegroupName (BOA_CLUSTER_NAME, BOA_NODEGROUP_NAME)',
      });
    }
  });

/** The slowest tick on AWS: two Heartbeats within the budget guard's shortest silence (5 minutes). */
export const MAX_AWS_TICK_SECONDS = 120;

export type ServiceConfig = WithInstanceDefaults<z.output<typeof configSchema>>;

/** The executor in effect: as configured, else local processes with cloud local and pods with aws. */
export function executorKind(config: ServiceConfig): 'local' | 'kubernetes' {
  return config.executor ?? (config.cloud === 'aws' ? 'kubernetes' : 'local');
}

/** BOA_URL as replicas get it. */
export function publicUrl(config: ServiceConfig): string {
  if (config.publicUrl) return config.publicUrl.replace(/\/$/, '');
  return localUrl(config.host, config.port);
}

/**
 * The URL this machine reaches a service listening on host:port at: every address (0.0.0.0, ::) is
 * reached at 127.0.0.1, and an IPv6 address is bracketed (http://::1:8080 is not a URL).
 */
export function localUrl(host: string, port: number): string {
  const reached = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reached.includes(':') ? `[${reached}]` : reached}:${port}`;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as NodeJS.ErrnoException).code}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not JSON: ${(error as Error).message}`);
  }
  if (!json || typeof json !== 'object' || Array.isArray(json))
    throw new ConfigError(`config file ${path} must hold one JSON object of settings`);
  return fromSource({ kind: 'file', path }, json as Record<string, unknown>);
}

/** The setting names the schema takes at a path ([] for the top level, ['local'], ...). */
export function settingsAt(path: readonly PropertyKey[]): string[] {
  let schema: unknown = configSchema;
  for (const key of path) {
    schema = (schema as { shape?: Record<string, unknown> }).shape?.[String(key)];
    // Through .default() and .optional() to the object inside.
    while (schema && !(schema as { shape?: unknown }).shape) {
      const inner = (schema as { _zod?: { def?: { innerType?: unknown } } })._zod?.def?.innerType;
      if (!inner) break;
      schema = inner;
    }
  }
  return Object.keys((schema as { shape?: Record<string, unknown> } | undefined)?.shape ?? {});
}

/** Merges the layers (later wins, nested objects merged) and validates. */
export function resolveConfig(...layers: Record<string, unknown>[]): ServiceConfig {
  const merged: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      const before = merged[key];
      merged[key] =
        before && typeof before === 'object' && value && typeof value === 'object' && !Array.isArray(value)
          ? { ...before, ...value }
          : value;
    }
  }
  const result = configSchema.safeParse(merged);
  if (!result.success) {
    // Unknown settings first: a typo ("aws.regon") is the cause to fix, and the settings it left
    // missing (aws.clusterName) are reported after it, not ahead of it (found in a newcomer trial).
    const unknownFirst = [...result.error.issues].sort(
      (a, b) => Number(b.code === 'unrecognized_keys') - Number(a.code === 'unrecognized_keys'),
    );
    const issues = unknownFirst.map((i) =>
      i.code === 'unrecognized_keys'
        ? describeUnknownKeys(i, layers, settingsAt(i.path))
        : describeIssue(i, layers),
    );
    throw new ConfigError(`invalid configuration: ${issues.join('; ')}`);
  }
  return withInstanceDefaults(result.data);
}
