import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * Service configuration: defaults < config file (JSON) < environment (BOA_*) < command-line flags.
 * Validated once at start; an error names the setting and where it came from.
 */
const positive = (what: string) =>
  z.number({ error: `${what} must be a number` }).positive(`${what} must be > 0`);

export const configSchema = z
  .strictObject({
    port: z.number().int().min(0).max(65535).default(8080),
    host: z.string().default('127.0.0.1'),
    dataDir: z.string().min(1).default('./data'),
    cloud: z.enum(['local', 'aws']).default('local'),
    /** Operator bearer token; in local mode one is generated into the data dir when absent. */
    token: z.string().min(16, 'token must be at least 16 characters').optional(),
    profiles: z.string().optional(),
    tickSeconds: positive('tickSeconds').default(60),
    calculatorMinutes: positive('calculatorMinutes').default(15),
    rateWindowHours: positive('rateWindowHours').default(24),
    /** Hours of pseudo-observations the configured prior rates are worth in the rate estimate. */
    priorWeightHours: z.number().nonnegative().default(2),
    budgetWindowHours: positive('budgetWindowHours').default(24),
    /** Initial budget (GPU-hours per hour) when none is stored yet. */
    budget: z.number().positive().optional(),
    /** Prior arrival rates per class, jobs/hour; classes without one start at 0 and are learned. */
    priorRates: z.record(z.string(), z.number().nonnegative()).default({}),
    gpusPerNode: z.number().int().positive().default(4),
    instanceType: z.string().default('g4dn.12xlarge'),
    /** On-demand price of one node per hour, for the $ per month estimate (us-east-1 g4dn.12xlarge). */
    nodePricePerHour: z.number().nonnegative().default(3.912),
    /** Hard cap on nodes, below the node group's own maximum. */
    maxNodes: z.number().int().nonnegative().optional(),
    solver: z.enum(['exact', 'paper']).default('exact'),
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
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((c, ctx) => {
    if (c.cloud === 'aws' && !c.aws) {
      ctx.addIssue({
        code: 'custom',
        path: ['aws'],
        message:
          'cloud "aws" needs aws.clusterName and aws.nodegroupName (BOA_CLUSTER_NAME, BOA_NODEGROUP_NAME)',
      });
    }
  });

export type ServiceConfig = z.output<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

function number(env: Env, key: string): number | undefined {
  const raw = env[key];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new ConfigError(`${key} must be a number, got "${raw}"`);
  return value;
}

/** The BOA_* environment variables, as a partial config. */
export function configFromEnv(env: Env): Record<string, unknown> {
  const aws =
    env.BOA_CLUSTER_NAME || env.BOA_NODEGROUP_NAME
      ? { region: env.AWS_REGION, clusterName: env.BOA_CLUSTER_NAME, nodegroupName: env.BOA_NODEGROUP_NAME }
      : undefined;
  const out: Record<string, unknown> = {
    port: number(env, 'BOA_PORT'),
    host: env.BOA_HOST,
    dataDir: env.BOA_DATA_DIR,
    cloud: env.BOA_CLOUD,
    token: env.BOA_TOKEN,
    profiles: env.BOA_PROFILES,
    tickSeconds: number(env, 'BOA_TICK_SECONDS'),
    budget: number(env, 'BOA_BUDGET'),
    gpusPerNode: number(env, 'BOA_GPUS_PER_NODE'),
    instanceType: env.BOA_INSTANCE_TYPE,
    maxNodes: number(env, 'BOA_MAX_NODES'),
    logLevel: env.BOA_LOG_LEVEL,
    aws,
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined && v !== ''));
}

export function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as NodeJS.ErrnoException).code}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not JSON: ${(error as Error).message}`);
  }
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
    const issues = result.error.issues.map((i) => `${i.path.join('.') || '(config)'}: ${i.message}`);
    throw new ConfigError(`invalid configuration: ${issues.join('; ')}`);
  }
  return result.data;
}
