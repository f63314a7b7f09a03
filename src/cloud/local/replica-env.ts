/** What a local replica's command inherits: the service's environment, less what is not the job's. */

/**
 * Variables of the service's own environment a job must not inherit: boa's (the operator token above
 * all), and a distributed launcher's (torchrun's RANK, LOCAL_RANK, TORCHELASTIC_*, ...), which a job's
 * own launcher sets per worker and which, left over from the shell that started the service, would make
 * a training script believe it had been launched as that worker.
 */
const PRIVATE_ENV =
  /^(BOA_|TORCHELASTIC_)|^(RANK|LOCAL_RANK|GROUP_RANK|ROLE_RANK|LOCAL_WORLD_SIZE|GROUP_WORLD_SIZE|ROLE_WORLD_SIZE|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|NODE_RANK|NNODES|NPROC_PER_NODE)$/;

/**
 * The service's secrets in its environment: its cloud credentials (AWS_*), anything named a secret,
 * password (PGPASSWORD, MYSQL_PWD), passphrase or credential, a token or auth as a word (HF_TOKEN,
 * SSH_AUTH_SOCK: the operator's ssh agent; not MAX_TOKENS or GIT_AUTHOR_NAME), a key of the kinds that
 * are secrets (OPENAI_API_KEY, SSH_PRIVATE_KEY; not CACHE_KEY), a personal access token (GITHUB_PAT) or
 * a DSN. Also a token word joined to its kind (NGROK_AUTHTOKEN, npm's `npm_config_//host/:_authToken`,
 * an ACCESSTOKEN, CF_APITOKEN, SLACK_BOTTOKEN), a JWT (CI_JOB_JWT), an application's or account's key
 * (DD_APP_KEY, AZURE_STORAGE_ACCOUNT_KEY), Kaggle's KAGGLE_KEY: found passing in a security review and
 * its review. A job gets the ones it needs from its
 * workload's `env` (`--env`).
 */
const SECRET_ENV =
  /^AWS_|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|_PWD$|(^|_)(TOKEN|AUTH|JWT)(_|$)|(AUTH|ACCESS|REFRESH|BEARER|SESSION|API|BOT)_?TOKEN|^KAGGLE_KEY$|(API_?KEY|PRIVATE_KEY|ACCESS_KEY|SIGNING_KEY|ENCRYPTION_KEY|MASTER_KEY|(APP|APPLICATION|ACCOUNT|CLIENT)_?KEY)$|(^|_)(PAT|DSN)$/i;

/** A URL with a password in it (DATABASE_URL=postgres://user:pw@host/db), whatever its name. */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@\s:]*:[^/@\s]*@/i;

/**
 * A connection string (`key=value;...`: Azure's, ADO.NET's; or libpq's `host=db password=pw`, space
 * separated) with a key or password in it.
 */
const CONNECTION_STRING_SECRET =
  /(^|[;\s])\s*(AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)\s*=/i;

/** Whether a value holds a secret whatever its name. */
const secretValue = (value: string) => URL_WITH_PASSWORD.test(value) || CONNECTION_STRING_SECRET.test(value);

/** Whether a job does not inherit this variable of the service's. */
function heldBack(name: string, value: string): boolean {
  return PRIVATE_ENV.test(name) || SECRET_ENV.test(name) || secretValue(value);
}

/**
 * The names of the service's secrets no job inherits (logged once: one a job needed is no mystery).
 * boa's own variables and a launcher's are not listed: boa sets its own per job (BOA_URL, WORLD_SIZE),
 * and a log line telling the operator to pass BOA_URL with --env misled (found trying boa as a newcomer).
 */
export function heldBackNames(serviceEnv: NodeJS.ProcessEnv): string[] {
  return Object.entries(serviceEnv)
    .filter(([name, value]) => value !== undefined && (SECRET_ENV.test(name) || secretValue(value)))
    .map(([name]) => name)
    .sort();
}

/** The service's environment less the two kinds above, then the workload's own env, then boa's. */
export function replicaEnv(
  serviceEnv: NodeJS.ProcessEnv,
  workloadEnv: Readonly<Record<string, string>> | undefined,
  boaEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(serviceEnv)) {
    if (value !== undefined && !heldBack(name, value)) env[name] = value;
  }
  return Object.assign(env, workloadEnv ?? {}, boaEnv);
}
