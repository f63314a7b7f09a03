/**
 * The service's BOA_* environment variables: what they set (a partial config for resolveConfig) and
 * which ones in a shell boa does not read, so a misspelt one is warned about instead of ignored.
 */
import { closest, fromSource } from './config-sources.ts';
import { ConfigError, settingsAt } from './config.ts';

type Env = Readonly<Record<string, string | undefined>>;

function number(env: Env, key: string): number | undefined {
  const raw = env[key];
  // Blank is unset, as empty is: Number(" ") is 0 (BOA_MAX_NODES=" " capped the pool at no nodes).
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new ConfigError(`${key} must be a number, got "${raw}"`);
  return value;
}

/**
 * A yes/no variable: 1, true or yes (any case) is yes; unset or empty is no. Anything else is refused,
 * naming the variable: a "on" silently read as no would skip what the operator asked for.
 */
export function envFlag(env: Env, key: string): boolean {
  const raw = env[key]?.trim();
  if (raw === undefined || raw === '') return false;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  // Off said as plainly: `kubectl set env ... =0` to turn it off must not crash-loop the pod.
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw new ConfigError(
    `${key} must be 1, true or yes (on), 0, false or no (off), or unset, got "${env[key]}"`,
  );
}

function definedOnly(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** The BOA_* environment variables, as a partial config. */
export function configFromEnv(env: Env): Record<string, unknown> {
  // Unset variables are left out, not set to undefined: the merge would wipe the file's aws.region.
  const aws =
    env.BOA_CLUSTER_NAME || env.BOA_NODEGROUP_NAME
      ? definedOnly({
          region: env.AWS_REGION || undefined,
          clusterName: env.BOA_CLUSTER_NAME || undefined,
          nodegroupName: env.BOA_NODEGROUP_NAME || undefined,
        })
      : undefined;
  // Empty (or only commas) is unset: an empty list would replace the config file's pull secrets.
  const pullSecrets = env.BOA_IMAGE_PULL_SECRETS?.split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const imagePullSecrets = pullSecrets && pullSecrets.length > 0 ? pullSecrets : undefined;
  const kubernetes =
    env.BOA_JOBS_NAMESPACE || env.BOA_JOBS_SERVICE_ACCOUNT || imagePullSecrets
      ? definedOnly({
          namespace: env.BOA_JOBS_NAMESPACE || undefined,
          serviceAccountName: env.BOA_JOBS_SERVICE_ACCOUNT || undefined,
          imagePullSecrets,
        })
      : undefined;
  const out: Record<string, unknown> = {
    port: number(env, 'BOA_PORT'),
    host: env.BOA_HOST,
    dataDir: env.BOA_DATA_DIR,
    cloud: env.BOA_CLOUD,
    token: env.BOA_TOKEN,
    tokenSecretArn: env.BOA_TOKEN_SECRET_ARN,
    tokenRefreshSeconds: number(env, 'BOA_TOKEN_REFRESH_SECONDS'),
    profiles: env.BOA_PROFILES,
    tickSeconds: number(env, 'BOA_TICK_SECONDS'),
    budget: number(env, 'BOA_BUDGET'),
    gpusPerNode: number(env, 'BOA_GPUS_PER_NODE'),
    instanceType: env.BOA_INSTANCE_TYPE,
    nodePricePerHour: number(env, 'BOA_NODE_PRICE_PER_HOUR'),
    maxNodes: number(env, 'BOA_MAX_NODES'),
    guardMinutes: number(env, 'BOA_GUARD_MINUTES'),
    logLevel: env.BOA_LOG_LEVEL,
    executor: env.BOA_EXECUTOR,
    publicUrl: env.BOA_PUBLIC_URL,
    terminationGraceSeconds: number(env, 'BOA_TERMINATION_GRACE_SECONDS'),
    maxRestarts: number(env, 'BOA_MAX_RESTARTS'),
    leaseSeconds: number(env, 'BOA_LEASE_SECONDS'),
    jobLogRetentionDays: number(env, 'BOA_JOB_LOG_RETENTION_DAYS'),
    logKeepaliveSeconds: number(env, 'BOA_LOG_KEEPALIVE_SECONDS'),
    aws,
    kubernetes,
  };
  return fromSource(
    { kind: 'env' },
    Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined && v !== '')),
  );
}

/** The BOA_* variables the service reads (configFromEnv, and --log-format's). */
export const SERVICE_ENV: readonly string[] = [
  'BOA_PORT',
  'BOA_HOST',
  'BOA_DATA_DIR',
  'BOA_CLOUD',
  'BOA_TOKEN',
  'BOA_TOKEN_SECRET_ARN',
  'BOA_TOKEN_REFRESH_SECONDS',
  'BOA_PROFILES',
  'BOA_TICK_SECONDS',
  'BOA_BUDGET',
  'BOA_GPUS_PER_NODE',
  'BOA_INSTANCE_TYPE',
  'BOA_NODE_PRICE_PER_HOUR',
  'BOA_MAX_NODES',
  'BOA_GUARD_MINUTES',
  'BOA_LOG_LEVEL',
  'BOA_LOG_FORMAT',
  'BOA_EXECUTOR',
  'BOA_PUBLIC_URL',
  'BOA_TERMINATION_GRACE_SECONDS',
  'BOA_MAX_RESTARTS',
  'BOA_LEASE_SECONDS',
  'BOA_JOB_LOG_RETENTION_DAYS',
  'BOA_LOG_KEEPALIVE_SECONDS',
  'BOA_CLUSTER_NAME',
  'BOA_NODEGROUP_NAME',
  'BOA_JOBS_NAMESPACE',
  'BOA_JOBS_SERVICE_ACCOUNT',
  'BOA_IMAGE_PULL_SECRETS',
  'BOA_ROLLBACK_TO_COPY',
];

/**
 * BOA_* variables other parts of boa read, which the service's shell may well carry: the CLI's
 * (BOA_URL, BOA_TOKEN, BOA_DATA_DIR), the ones boa sets for a job's processes (a service started from
 * a job, or a job's shell), and the development scripts' and tests'.
 */
const OTHER_BOA_ENV = [
  'BOA_URL',
  'BOA_JOB_ID',
  'BOA_JOB_TOKEN',
  'BOA_GENERATION',
  'BOA_FIRST_RANK',
  'BOA_CHECKPOINT_DIR',
  'BOA_SIGTERM_FILE',
  'BOA_URL_FILE',
  'BOA_CHROMIUM',
  'BOA_SKIP_CHROMIUM_INSTALL',
  'BOA_KEEP_SCREENSHOTS',
  'BOA_TORCH_PYTHON',
  'BOA_TEST_URL',
];

export const KNOWN_BOA_ENV: readonly string[] = [...new Set([...SERVICE_ENV, ...OTHER_BOA_ENV])];

/**
 * The BOA_* variables boa does not know, each with what it may have meant: a misspelt one would be
 * ignored, so the start warns; it does not refuse, since a shell may carry another tool's BOA_*.
 */
export function unknownEnv(env: Env): Array<{ name: string; hint: string }> {
  const fileOnly = settingsAt([]);
  return Object.keys(env)
    .filter((name) => name.startsWith('BOA_') && !KNOWN_BOA_ENV.includes(name))
    .sort()
    .map((name) => {
      const meant = closest(name, KNOWN_BOA_ENV);
      if (meant) return { name, hint: `did you mean ${meant}?` };
      // A variable for warmupHours, say: a setting, but one the config file alone sets.
      const camel = name
        .slice(4)
        .toLowerCase()
        .replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
      const setting = closest(camel, fileOnly);
      if (setting) return { name, hint: `${setting} is set in the --config file only` };
      return { name, hint: 'the variables are in docs/service.md' };
    });
}
