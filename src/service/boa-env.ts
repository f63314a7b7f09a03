/**
 * The environment variables boa sets in every replica, per generation (src/service/replica-specs.ts,
 * the local supervisor's BOA_SIGTERM_FILE and BOA_URL_FILE): a job given one of its own would have it
 * overridden without a word (a WORLD_SIZE=5 meant as a fixed width runs at the width boa chooses), so a
 * submission naming one is refused instead. BOA_CHECKPOINT_DIR is not among them: a job's own is
 * honoured (docs/jobs.md, where a job checkpoints).
 */
const BOA_SET_ENV = [
  'BOA_URL',
  'BOA_URL_FILE',
  'BOA_JOB_ID',
  'BOA_JOB_TOKEN',
  'BOA_GENERATION',
  'BOA_FIRST_RANK',
  'BOA_SIGTERM_FILE',
  'WORLD_SIZE',
  'NNODES',
  'NODE_RANK',
  'NPROC_PER_NODE',
  'MASTER_ADDR',
  'MASTER_PORT',
];

/** Whether boa sets this variable itself in every replica. */
export const isBoaSetEnv = (name: string): boolean => BOA_SET_ENV.includes(name);

/** The rule in words, for a refusal. */
export const BOA_SET_ENV_RULE = `boa sets ${BOA_SET_ENV.join(', ')} itself, for each generation`;
