import { isAbsolute, resolve } from 'node:path';
import { IDEMPOTENCY_KEY_RULE, validIdempotencyKey } from '../../core/idempotency-key.ts';
import type { Command } from 'commander';
import type { jobView } from '../../service/views.ts';
import type { BoaClient } from '../client.ts';
import { isLocalUrl } from '../connection.ts';
import { contextOf, output } from '../context.ts';
import { keyValues, printable } from '../format.ts';
import { CliError, EXIT, usageError } from '../errors.ts';
import { followLogs, WHOLE_LOG } from './jobs-logs.ts';
import { classCameAfterDashes, rawArgsOf, refuseWordsBeforeDashes } from './submit-dashes.ts';
import { parseDuration, type WaitOptions, waitForJobs } from './jobs-wait.ts';

type JobView = ReturnType<typeof jobView>;

/** `boa jobs submit <class> (-- command... | --self-launched)`: a job boa runs, or a self-launched one's token. */
export function addSubmitCommand(jobs: Command): void {
  jobs
    .command('submit')
    .description(
      'submit a training job of a class. With a command after --, boa runs it (one process or pod per node' +
        " of the job's placement, rescaled as its width changes); with --self-launched instead, prints the" +
        ' token the job polls its allocation with',
    )
    .argument('<class>', 'job class, e.g. cifar10 (see boa classes list)')
    .argument('[command...]', 'after --: the program boa runs and its arguments, e.g. -- python train.py')
    .option('--name <name>', 'a name to recognise the job by')
    .option(
      '--self-launched',
      "no command: boa runs nothing and prints the token the job's own launcher polls its allocation with (it gets GPUs, paid, from the next tick)",
    )
    .option('--image <image>', 'container image (Kubernetes executor; ignored by the local one)')
    .option(
      '--env <NAME=value>',
      'an environment variable for the job (repeatable); NAME alone takes its value from this shell',
      collect,
    )
    .option(
      '--workdir <dir>',
      "the job's working directory (local executor: default, and relative to, this one)",
    )
    .option('--checkpoint <uri>', 'checkpoint location, given to the job as BOA_CHECKPOINT_DIR')
    .option('--checkpoint-claim <pvc>', 'Kubernetes volume claim for checkpoints')
    .option(
      '--idempotency-key <key>',
      'a key of yours (e.g. a UUID) that makes a retried submit safe: the same key again gives back the job' +
        ' it submitted, never a second one (1-255 printable ASCII characters)',
    )
    .option(
      '--wait',
      'then wait until the job ends, as boa jobs wait does (exit 0 done, 5 not done, 6 timeout)',
    )
    .option('--timeout <duration>', 'with --wait: give up after this long (90, 90s, 30m, 2h)')
    .option(
      '-f, --follow',
      "then print its output (rank 0) from its first run until it ends, as boa jobs logs -f does (exit 0 done, 5 not); the submission's lines go to stderr",
    )
    // Without the --, the job's own options read as boa's: say where they go.
    .configureOutput({
      outputError: (message, write) =>
        write(
          message.startsWith('error: unknown option')
            ? `${message}(the job's command and its options go after --: boa jobs submit cifar10 -- node train.js --epochs 3)\n`
            : message,
        ),
    })
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
      refuseWordsBeforeDashes(command, className, words);
      // `submit cifar10 -- $CMD` with $CMD empty: a self-launched job nobody launches would hold its
      // GPUs until its lease ran out. --self-launched, with no --, is how to ask for one.
      if (words.length === 0 && rawArgsOf(command).includes('--'))
        throw usageError('nothing after --: give the command boa should run, e.g. -- python3 train.py');
      if (options.timeout !== undefined && !options.wait) throw usageError('--timeout needs --wait');
      if (options.follow && (options.wait || context.json))
        throw usageError("--follow prints the job's output: give it without --wait and --json");
      if (options.follow && words.length === 0)
        throw usageError(
          '--follow needs a command after -- (a job boa runs): a self-launched job keeps its own output',
        );
      // Checked before submitting: a bad --timeout must not leave a job submitted behind an error.
      if (options.timeout !== undefined) parseDuration(options.timeout);
      // Nobody but its launcher runs a self-launched job, and that launcher needs the token printed now.
      if (options.wait && words.length === 0)
        throw usageError(
          '--wait needs a command after -- (a job boa runs); wait for a self-launched job with boa jobs wait',
        );
      // A forgotten -- would register a job nobody launches, holding paid GPUs until its lease ran out.
      if (words.length === 0 && !options.selfLaunched)
        throw usageError(
          `give the command boa should run after --, e.g. boa jobs submit ${className} -- python3 train.py` +
            ' (for a job you launch yourself: --self-launched)',
        );
      if (words.length > 0 && options.selfLaunched)
        throw usageError('--self-launched takes no command: boa runs what comes after --');
      const workload = await inSubmitDir(context.client, workloadOf(words, options));
      const body = {
        class: className,
        ...(options.name === undefined ? {} : { name: options.name }),
        ...(workload ? { workload } : {}),
      };
      const key = options.idempotencyKey;
      // The API's rule, checked here too: fetch cannot even send a header outside Latin-1, and HTTP
      // drops spaces at either end of a header's value, so "k " would replay the job key "k" made.
      if (key !== undefined && !validIdempotencyKey(key))
        throw usageError(`--idempotency-key must be ${IDEMPOTENCY_KEY_RULE}`);
      const { data, text, headers } = await context.client
        .json<{ id: number; token: string; job: JobView; tokenReplaced?: boolean; warning: string | null }>(
          'POST',
          '/v1/jobs',
          body,
          key === undefined ? undefined : { 'idempotency-key': key },
          ['id', 'token', 'job'],
        )
        .catch((error: unknown) => {
          throw unseenFolder(error, workload?.workingDir, options.workdir);
        });
      const note = workload
        ? 'boa runs the command when the job gets GPUs; its processes get this token as BOA_JOB_TOKEN.'
        : // A job submitted without `-- command` by mistake holds paid GPUs until its lease ends: say so.
          "self-launched: boa starts nothing for it, but gives it GPUs (paid) from the next tick. The job's" +
          ' launcher needs this token for its allocation, progress and complete calls (shown only now);' +
          ' unpolled for its lease (leaseSeconds, 10 minutes by default) the job is lost and its GPUs freed.' +
          ` For boa to run a command instead: boa jobs submit ${data.job.class} -- <command>.`;
      // A job submitted before any budget waits "for a plan" that never comes: say what to do.
      const unbudgeted =
        !context.json && data.job.waitingFor === 'plan' && (await noBudgetSet(context.client));
      if (options.name !== undefined) await sayNameShared(context.client, options.name, data.id);

      // With --json and --wait, stdout holds one JSON document: the job as it ended.
      if (options.wait && context.json) return waitForJobs(context, [data.id], waitOptions(options));
      // Followed, stdout is the job's output (to a file, a pipe): what was submitted goes to stderr.
      const print = options.follow ? (line: string) => void process.stderr.write(line) : context.print;
      // The name given, to recognise the job by; unnamed, the service names it after its class: no news.
      const named = options.name === undefined ? '' : ` "${options.name}"`;
      output({ ...context, print }, text, () =>
        keyValues([
          ['job', `${data.id}${named} (${data.job.class}, ${data.job.state})`],
          ['token', data.token],
          ['note', note],
          // Accepted but unused here (--image on a local service): said, not silently dropped. Not the
          // API's word that a job without a workload is self-launched: --self-launched asked for it, and
          // the note says it.
          ...(data.warning && workload ? [['warning', data.warning] as [string, string]] : []),
          ...(unbudgeted
            ? [
                ['budget', 'none is set: the job waits until boa budget set <gpuHoursPerHour>'] as [
                  string,
                  string,
                ],
              ]
            : []),
          ...(headers.get('idempotent-replayed') === 'true' ? [alreadySubmitted(data)] : []),
        ]),
      );
      if (options.wait) await waitForJobs(context, [data.id], waitOptions(options));
      if (options.follow)
        await followLogs(context.client, data.id, { rank: 0, tail: WHOLE_LOG, fromFirstRun: true });
    });
}

/**
 * Whether no budget is set, for a note after the submission. Only a note, as sayNameShared's: the job
 * is submitted, and a self-launched job's token, shown only now, must still be printed (found in
 * review: a failed read here, a service restarting, ended the command with the job registered and
 * its token never shown, so its launcher could not run it and a plain retry submitted a second job).
 */
async function noBudgetSet(client: BoaClient): Promise<boolean> {
  try {
    const { data } = await client.json<{ gpuHoursPerHour: number | null }>('GET', '/v1/budget');
    return data.gpuHoursPerHour === null;
  } catch {
    return false;
  }
}

/**
 * A name another waiting or running job has too (the quick start run twice): commands that take a name
 * refuse it while both are active (job-refs.ts), so say so now, on stderr, and go on.
 */
async function sayNameShared(client: BoaClient, name: string, id: number): Promise<void> {
  const query = new URLSearchParams({ name, state: 'waiting,running', limit: '10000' });
  let jobs: Array<{ id: number; state: string }>;
  try {
    jobs = (await client.json<{ jobs: typeof jobs }>('GET', `/v1/jobs?${query}`)).data.jobs;
  } catch {
    // Only a note: the job is submitted, and its token (shown only now) must still be printed.
    return;
  }
  const others = jobs.filter((j) => j.id !== id);
  if (others.length === 0) return;
  const which = others.map((j) => `job ${j.id} (${j.state})`).join(', ');
  process.stderr.write(
    `boa: ${which} is also named "${printable(name)}": while both are active, commands take their ids, not the name\n`,
  );
}

function waitOptions(options: SubmitOptions): WaitOptions {
  return { interval: '5', ...(options.timeout === undefined ? {} : { timeout: options.timeout }) };
}

/** The line a replayed submission adds: no new job, and whether the token printed is a new one. */
function alreadySubmitted(data: { id: number; tokenReplaced?: boolean }): [string, string] {
  const token = data.tokenReplaced
    ? 'the token above replaces the one printed then, which no longer works'
    : 'the token is the one it was given then';
  return ['submitted', `already, as job ${data.id}, with this --idempotency-key: no new job; ${token}`];
}

interface SubmitOptions {
  name?: string;
  selfLaunched?: boolean;
  image?: string;
  /** Undefined when none is given: a default of [] showed as "(default: [])" in the help. */
  env?: string[];
  workdir?: string;
  checkpoint?: string;
  checkpointClaim?: string;
  wait?: boolean;
  follow?: boolean;
  timeout?: string;
  idempotencyKey?: string;
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
    ['--idempotency-key', options.idempotencyKey],
    ['--timeout', options.timeout],
  ];
  const empty = flags.find(([, value]) => value === '--' || (Array.isArray(value) && value.includes('--')));
  if (empty) throw usageError(`${empty[0]} needs a value before --, e.g. ${empty[0]} VALUE -- node train.js`);
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The workload the options and the words after `--` describe, or undefined for a self-launched job. */
function workloadOf(words: string[], options: SubmitOptions) {
  const runOptions = [options.image, options.workdir, options.checkpoint, options.checkpointClaim];
  const pairs = options.env ?? [];
  if (words.length === 0) {
    if (pairs.length > 0 || runOptions.some((o) => o !== undefined)) {
      throw new CliError(
        'give the command boa should run after --, e.g. boa jobs submit cifar10 --image IMG -- python train.py',
        EXIT.badInput,
      );
    }
    return undefined;
  }
  // No prototype: --env __proto__=x stays a key, for the service to refuse by name, not vanish.
  const env: Record<string, string> = Object.create(null);
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(pair)) {
      // --env NAME: the value from this shell, kept off the command line (ps, shell history).
      const value = process.env[pair];
      if (value === undefined)
        throw new CliError(
          `--env ${pair}: ${pair} is not set here (give NAME=value, or export it)`,
          EXIT.badInput,
        );
      env[pair] = value;
      continue;
    }
    if (at <= 0) throw new CliError(`--env takes NAME=value or NAME, got "${pair}"`, EXIT.badInput);
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
    ...(pairs.length === 0 ? {} : { env }),
    ...(options.workdir === undefined ? {} : { workingDir: options.workdir }),
    ...(checkpoint ? { checkpoint } : {}),
  };
}

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
