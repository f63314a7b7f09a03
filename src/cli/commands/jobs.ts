import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { jobView } from '../../service/views.ts';
import type { BoaClient } from '../client.ts';
import { type Connection, isLocalUrl, localDataDir } from '../connection.ts';
import { contextOf, output } from '../context.ts';
import { fixed, keyValues, table, when } from '../format.ts';
import { CliError, EXIT, usageError } from '../errors.ts';
import { resolveJobRef } from '../job-refs.ts';
import { parseNumber } from '../parse.ts';
import { addCancelCommand } from './jobs-cancel.ts';

type JobView = ReturnType<typeof jobView>;

export const JOB_STATES = ['waiting', 'running', 'done', 'cancelled', 'failed', 'lost'] as const;

export function addJobsCommands(program: Command): void {
  const jobs = program.command('jobs').description('training jobs: list, show, submit (register), cancel');

  jobs
    .command('list')
    .description('list the newest jobs (--limit), oldest first')
    .option(
      '--state <states>',
      `only jobs in this state, or any of several: waiting,running (${JOB_STATES.join(', ')})`,
    )
    .option('--class <class>', 'only jobs of this class')
    .option('--name <name>', 'only jobs of exactly this name')
    .option('--limit <n>', 'the newest this many jobs (the service allows 1 to 10000; default 1000)')
    .action(async (options: ListOptions, command: Command) => {
      const context = contextOf(command);
      const query = new URLSearchParams();
      if (options.state !== undefined) query.set('state', parseStates(options.state).join(','));
      if (options.class !== undefined) query.set('class', options.class);
      if (options.name !== undefined) query.set('name', options.name);
      const limit = options.limit === undefined ? DEFAULT_LIMIT : parseNumber(options.limit, '--limit');
      if (options.limit !== undefined) query.set('limit', String(limit));
      const path = query.size > 0 ? `/v1/jobs?${query}` : '/v1/jobs';
      const { data, text } = await context.client.json<{ jobs: JobView[] }>('GET', path);
      output(context, text, () => renderJobs(data.jobs));
      // On stderr, so the table stays whole for awk: a full page may have older jobs before it.
      if (!context.json && data.jobs.length === limit)
        process.stderr.write(`the newest ${limit} jobs are shown; older ones: --limit N (up to 10000)\n`);
    });

  jobs
    .command('show')
    .description('one job: state, width and generation, epoch, restarts, its command and (local) its logs')
    .argument('<job>', 'job id, or the name of one job (see boa jobs list)')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const context = contextOf(command);
      const jobId = await resolveJobRef(context.client, ref);
      const { data, text } = await context.client.json<JobView>('GET', `/v1/jobs/${jobId}`);
      output(context, text, () => renderJob(data, logsDir(context.client.connection, data)));
    });

  jobs
    .command('logs')
    .description("the last lines a job's replica wrote (jobs boa runs; on Kubernetes while the pod exists)")
    .argument('<job>', 'job id, or the name of one job (see boa jobs list)')
    .option('--rank <n>', "the replica's rank", '0')
    .option('--generation <g>', 'default: the newest generation whose log is kept')
    .option('--tail <n>', 'the last this many lines (1 to 10000)', '100')
    .action(
      async (ref: string, options: { rank: string; generation?: string; tail: string }, command: Command) => {
        const context = contextOf(command);
        const query = new URLSearchParams({
          rank: String(parseNumber(options.rank, '--rank')),
          tail: String(parseNumber(options.tail, '--tail')),
        });
        if (options.generation !== undefined)
          query.set('generation', String(parseNumber(options.generation, '--generation')));
        const jobId = await resolveJobRef(context.client, ref);
        process.stdout.write(await context.client.text('GET', `/v1/jobs/${jobId}/logs?${query}`));
      },
    );

  jobs
    .command('submit')
    .description(
      'submit a training job of a class. With a command after --, boa runs it (one process or pod per node' +
        " of the job's placement, rescaled as its width changes); without one, prints the token a" +
        ' self-launched job polls its allocation with',
    )
    .argument('<class>', 'job class, e.g. cifar10 (see boa classes list)')
    .argument('[command...]', 'after --: the program boa runs and its arguments, e.g. -- python train.py')
    .option('--name <name>', 'a name to recognise the job by')
    .option('--image <image>', 'container image (Kubernetes executor; ignored by the local one)')
    .option('--env <NAME=value>', 'an environment variable for the job (repeatable)', collect, [])
    .option(
      '--workdir <dir>',
      "the job's working directory (local executor: default, and relative to, this one)",
    )
    .option('--checkpoint <uri>', 'checkpoint location, given to the job as BOA_CHECKPOINT_DIR')
    .option('--checkpoint-claim <pvc>', 'Kubernetes volume claim for checkpoints')
    .action(async (className: string, words: string[], options: SubmitOptions, command: Command) => {
      const context = contextOf(command);
      if (classCameAfterDashes(command, className, words)) {
        throw new CliError(
          `no class before --: "${className}" is the start of the command; give the class first, e.g. ` +
            'boa jobs submit cifar10 -- node train.js (classes: boa classes list)',
          EXIT.badInput,
        );
      }
      refuseDashesAsValue(options);
      const workload = await inSubmitDir(context.client, workloadOf(words, options));
      const body = {
        class: className,
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(workload ? { workload } : {}),
      };
      const { data, text } = await context.client
        .json<{ id: number; token: string; job: JobView }>('POST', '/v1/jobs', body)
        .catch((error: unknown) => {
          throw unseenFolder(error, workload?.workingDir, options.workdir);
        });
      const note = workload
        ? 'boa runs the command when the job gets GPUs; its processes get this token as BOA_JOB_TOKEN.'
        : "the job's launcher needs this token: it authenticates the job's allocation, progress and" +
          ' complete calls. It is shown only now.';
      // A job submitted before any budget waits "for a plan" that never comes: say what to do.
      const unbudgeted =
        !context.json &&
        data.job.waitingFor === 'plan' &&
        (await context.client.json<{ gpuHoursPerHour: number | null }>('GET', '/v1/budget')).data
          .gpuHoursPerHour === null;
      output(context, text, () =>
        keyValues([
          ['job', `${data.id} (${data.job.class}, ${data.job.state})`],
          ['token', data.token],
          ['note', note],
          ...(unbudgeted
            ? [
                ['budget', 'none is set: the job waits until boa budget set <gpuHoursPerHour>'] as [
                  string,
                  string,
                ],
              ]
            : []),
        ]),
      );
    });

  addCancelCommand(jobs);
}

interface ListOptions {
  state?: string;
  class?: string;
  name?: string;
  limit?: string;
}

/** `--state running` or `--state waiting,running`: each a state, so a typo is named before any request. */
function parseStates(value: string): string[] {
  const states = value.split(',').map((s) => s.trim());
  const wrong = states.find((s) => !(JOB_STATES as readonly string[]).includes(s));
  if (wrong !== undefined) {
    throw new CliError(
      `--state takes ${JOB_STATES.join(', ')}, or several separated by commas (waiting,running); got "${wrong}"`,
      EXIT.badInput,
    );
  }
  return states;
}

interface SubmitOptions {
  name?: string;
  image?: string;
  env: string[];
  workdir?: string;
  checkpoint?: string;
  checkpointClaim?: string;
}

/** commander fills <class> from the words after -- when none comes before: `submit -- node x.js`. */
function classCameAfterDashes(command: Command, className: string, words: string[]): boolean {
  let root = command;
  while (root.parent) root = root.parent;
  const raw = (root as Command & { rawArgs?: string[] }).rawArgs ?? [];
  const dashes = raw.indexOf('--');
  if (dashes < 0) return false;
  const after = raw.slice(dashes + 1);
  return after.length === words.length + 1 && after[0] === className;
}

/** `--name -- node x` gave commander "--" as the name, and the job was submitted named "--". */
function refuseDashesAsValue(options: SubmitOptions): void {
  const flags: Array<[string, string | string[] | undefined]> = [
    ['--name', options.name],
    ['--image', options.image],
    ['--env', options.env],
    ['--workdir', options.workdir],
    ['--checkpoint', options.checkpoint],
    ['--checkpoint-claim', options.checkpointClaim],
  ];
  const empty = flags.find(([, value]) => value === '--' || (Array.isArray(value) && value.includes('--')));
  if (empty) throw usageError(`${empty[0]} needs a value before --, e.g. ${empty[0]} VALUE -- node train.js`);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The workload the options and the words after `--` describe, or undefined for a self-launched job. */
function workloadOf(words: string[], options: SubmitOptions) {
  const runOptions = [options.image, options.workdir, options.checkpoint, options.checkpointClaim];
  if (words.length === 0) {
    if (options.env.length > 0 || runOptions.some((o) => o !== undefined)) {
      throw new CliError(
        'give the command boa should run after --, e.g. boa jobs submit cifar10 --image IMG -- python train.py',
        EXIT.badInput,
      );
    }
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const pair of options.env) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliError(`--env takes NAME=value, got "${pair}"`, EXIT.badInput);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const checkpoint =
    options.checkpoint !== undefined || options.checkpointClaim !== undefined
      ? {
          ...(options.checkpoint === undefined ? {} : { uri: options.checkpoint }),
          ...(options.checkpointClaim === undefined ? {} : { volumeClaim: options.checkpointClaim }),
        }
      : undefined;
  return {
    command: words,
    ...(options.image === undefined ? {} : { image: options.image }),
    ...(options.env.length === 0 ? {} : { env }),
    ...(options.workdir === undefined ? {} : { workingDir: options.workdir }),
    ...(checkpoint ? { checkpoint } : {}),
  };
}

/** The service's page size when no --limit is given. */
const DEFAULT_LIMIT = 1000;

/**
 * A command run by the local executor of a service on this machine runs where it was submitted, as
 * sbatch's does: `-- python train.py` from a project folder ran in the service's folder and failed,
 * and `--workdir .` meant the service's. Anywhere else (pods, a remote service) the paths are theirs.
 */
async function inSubmitDir<W extends { workingDir?: string }>(
  client: BoaClient,
  workload: W | undefined,
): Promise<W | undefined> {
  if (!workload || (workload.workingDir !== undefined && isAbsolute(workload.workingDir))) return workload;
  if (!isLocalUrl(new URL(client.connection.url))) return workload;
  const { data } = await client.json<{ executor?: string | null }>('GET', '/v1/status');
  if (data.executor !== 'local') return workload;
  return { ...workload, workingDir: resolve(process.cwd(), workload.workingDir ?? '.') };
}

/**
 * A service on this machine's address that cannot see its folders (in a container, behind a tunnel)
 * refuses the folder the CLI took from this shell: say so, and how to name one it sees.
 */
function unseenFolder(error: unknown, sent: string | undefined, given: string | undefined): unknown {
  const defaulted = sent !== undefined && (given === undefined || !isAbsolute(given));
  if (!(error instanceof CliError) || !defaulted || !error.message.includes('workload.workingDir'))
    return error;
  const from =
    given === undefined ? "this shell's folder" : `--workdir ${given}, taken from this shell's folder`;
  return new CliError(
    `${error.message} (the working directory ${sent} is ${from}: if the service runs in a container or on ` +
      'another machine behind this address, pass --workdir with a folder it sees)',
    error.exitCode,
    error.body,
  );
}

const WAITS_FOR = { plan: 'waits for a plan', budget: 'queued for the budget', nodes: 'waits for nodes' };

/** The list's last column: why a waiting job waits, a running job's restarts, why a job ended badly. */
function outcome(job: JobView): string | null {
  if (job.waitingFor) return WAITS_FOR[job.waitingFor];
  const code = job.exitCode === null ? '' : `exit ${job.exitCode}: `;
  if (job.state !== 'failed' && job.state !== 'lost') {
    if (job.restarts === 0) return null;
    // A job crash-looping towards `failed` says why now, not only once it has failed for good.
    const last = job.failureReason ? `, the last after ${code}${job.failureReason}` : '';
    return `${job.restarts} restart${job.restarts === 1 ? '' : 's'}${last}`;
  }
  return `${code}${job.failureReason ?? job.state}`;
}

/**
 * The log folder of the job's latest generation that ran here, when the service is local: a failed or
 * cancelled job's generation went up when it stopped, and its last logs are in the one before.
 */
function logsDir(connection: Connection, job: JobView): string | undefined {
  if (!isLocalUrl(new URL(connection.url))) return undefined;
  const dir = join(localDataDir(process.env, process.cwd()), 'jobs', String(job.id));
  if (!existsSync(dir)) return undefined;
  const generations = readdirSync(dir)
    .filter((name) => /^\d+$/.test(name) && Number(name) <= job.generation)
    .map(Number);
  return generations.length > 0 ? join(dir, String(Math.max(...generations))) : undefined;
}

function renderJob(job: JobView, logs: string | undefined): string {
  const epochs = job.widths?.length;
  const active = job.state === 'waiting' || job.state === 'running';
  const work =
    job.workDoneSeconds > 0 ? ` (${fixed(job.workDoneSeconds, 1)} 1-GPU s of work done in it)` : '';
  const command = job.workload
    ? job.workload.command
        .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : JSON.stringify(word)))
        .join(' ')
    : 'none: self-launched (it polls its allocation)';
  return keyValues([
    ['job', `${job.id}${job.name ? ` ${job.name}` : ''} (${job.class})`],
    ['state', [job.state, outcome(job)].filter(Boolean).join(': ')],
    ['GPUs', `${job.width}, generation ${job.generation}`],
    ['epoch', `${job.statEpoch}${epochs ? ` of ${epochs}` : ''}${work}`],
    ['plan widths', job.widths ? `${job.widths.join(' ')} by epoch (plan #${job.planId})` : null],
    ['submitted', when(job.submittedAt)],
    ['started', when(job.startedAt)],
    ['finished', when(job.finishedAt)],
    [
      'restarts',
      `${job.restarts}${job.restartNotBefore && active ? `, the next not before ${when(job.restartNotBefore)}` : ''}`,
    ],
    ['command', command],
    ...(logs ? [['logs', `${logs}/<rank>.log`] as [string, string]] : []),
  ]);
}

function renderJobs(jobs: JobView[]): string {
  if (jobs.length === 0) return 'no jobs\n';
  const rows = jobs.map((j) => [
    j.id,
    j.name,
    j.class,
    j.state,
    j.statEpoch,
    j.width,
    when(j.submittedAt),
    when(j.startedAt),
    when(j.finishedAt),
    outcome(j),
  ]);
  return table(
    ['id', 'name', 'class', 'state', 'epoch', 'GPUs', 'submitted', 'started', 'finished', 'note'],
    rows,
  );
}
