/**
 * What a local job inherits of the service's environment: nothing of boa's, no launcher's leftovers,
 * none of the operator's secrets, everything else (PATH, HOME, a virtualenv's, a GPU library's).
 */
import { describe, expect, it } from 'vitest';
import { heldBackNames, replicaEnv } from '../../src/cloud/local/replica-env.ts';

describe('replicaEnv', () => {
  it("keeps the service's secrets from a job, by name and by a password in a URL", () => {
    const secrets = {
      AWS_SECRET_ACCESS_KEY: 'x',
      HF_TOKEN: 'x',
      DB_PASSWORD: 'x',
      PGPASSWORD: 'x',
      MYSQL_PWD: 'x',
      OPENAI_API_KEY: 'x',
      WANDB_API_KEY: 'x',
      STRIPE_APIKEY: 'x',
      SSH_PRIVATE_KEY: 'x',
      GPG_PASSPHRASE: 'x',
      GITHUB_PAT: 'x',
      GOOGLE_APPLICATION_CREDENTIALS: '/keys/sa.json',
      SENTRY_DSN: 'https://k@sentry.io/1',
      SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
      BASIC_AUTH: 'u:p',
      DATABASE_URL: 'postgres://user:pw@db.internal/app',
      REDIS: 'redis://:pw@cache:6379',
      BOA_TOKEN: 'operator',
    };
    const kept = {
      PATH: '/usr/bin',
      HOME: '/home/me',
      PWD: '/home/me/src',
      TOKENIZERS_PARALLELISM: 'false',
      GIT_AUTHOR_NAME: 'me',
      CUDA_VISIBLE_DEVICES: '0',
      NCCL_DEBUG: 'INFO',
      HF_HOME: '/cache/hf',
      MLFLOW_TRACKING_URI: 'http://mlflow.internal:5000',
      KEYBOARD: 'us',
      MAX_TOKENS: '512',
      MAX_NEW_TOKENS: '64',
      CACHE_KEY: 'v2',
    };
    const env = replicaEnv({ ...secrets, ...kept }, { HF_TOKEN: 'given' }, { WORLD_SIZE: '4' });
    expect(env).toEqual({ ...kept, HF_TOKEN: 'given', WORLD_SIZE: '4' });
    // The names held back, for the one log line that says so (never their values); not boa's own or a
    // launcher's, which boa sets per job itself (the line told the operator to pass BOA_URL with --env).
    const setPerJob = { BOA_URL: 'http://127.0.0.1:8080', RANK: '3' };
    expect(replicaEnv({ ...setPerJob, ...kept }, undefined, {})).toEqual(kept);
    expect(heldBackNames({ ...secrets, ...setPerJob, ...kept })).toEqual(Object.keys(secrets).sort());
  });

  it('keeps back the secrets named in other common ways (found in a security review)', () => {
    const secrets = {
      // A token word joined to the kind of token: ngrok's, npm's own environment form, an OAuth one.
      NGROK_AUTHTOKEN: 'x',
      NPM_CONFIG__AUTHTOKEN: 'x',
      'npm_config_//registry.npmjs.org/:_authToken': 'x',
      GITHUB_ACCESSTOKEN: 'x',
      CI_JOB_JWT: 'x',
      // Keys of an application or account (Datadog's, Backblaze's, Azure Storage's).
      DD_APP_KEY: 'x',
      B2_APPLICATION_KEY: 'x',
      AZURE_STORAGE_ACCOUNT_KEY: 'x',
      // A connection string with its key or password in it, whatever its name.
      AZURE_STORAGE_CONNECTION_STRING: 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=c2VjcmV0;',
      SQL: 'Server=db;Database=app;User Id=me;Password=pw;',
      BUS: 'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=k',
      // Found in the review of the first rule: libpq's space-separated form, and three more names.
      PG_CONN: 'host=db user=me password=pw dbname=app',
      KAGGLE_KEY: 'x',
      CF_APITOKEN: 'x',
      SLACK_BOTTOKEN: 'x',
    };
    const kept = {
      MAX_TOKENS: '512',
      TOKENIZERS_PARALLELISM: 'false',
      CACHE_KEY: 'v2',
      SORT_KEY: 'name',
      APP_NAME: 'train',
      KAGGLE_USERNAME: 'me',
      NCCL_SOCKET_IFNAME: 'eth0',
      XLA_FLAGS: '--xla_gpu_enable_latency_hiding_scheduler=true',
    };
    expect(replicaEnv({ ...secrets, ...kept }, undefined, {})).toEqual(kept);
    expect(heldBackNames({ ...secrets, ...kept })).toEqual(Object.keys(secrets).sort());
  });
});
