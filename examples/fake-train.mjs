#!/usr/bin/env node
// Fake training that follows boa's job protocol for real, with no GPU and nothing to install:
//
//   npx boa jobs submit cifar10 --name t -- node examples/fake-train.mjs --work-seconds 60
//
// It reads its launch environment, resumes from a checkpoint, does "work" at a speed that grows
// sublinearly with WORLD_SIZE, reports its statistical epochs, and on SIGTERM or a new generation
// writes a checkpoint and exits 0. After the last epoch rank 0 tells boa the job is complete.
// Self-launched (BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN only), it waits for GPUs and follows rescales
// in-process. The Python twin is examples/fake_train.py; the protocol is in docs/client.md.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BoaError, BoaJob, FINISHED_STATES } from '../clients/node/boa-job.mjs';

// How often a refused progress report is said again, with how many were not said meanwhile.
const REFUSAL_EVERY_SECONDS = 60;

/* global process, console, setTimeout, performance */

const USAGE = `usage: node examples/fake-train.mjs [--work-seconds S] [--epochs N] [--speed X] [--poll-seconds P] [--help]
  --work-seconds  1-GPU seconds of work in the whole job (FAKE_TRAIN_WORK_SECONDS, default 600)
  --epochs        statistical epochs it is split into (FAKE_TRAIN_EPOCHS, default its class's, as boa says)
  --speed         1-GPU work seconds done per second on one GPU (FAKE_TRAIN_SPEED, default 1)
  --poll-seconds  how often it polls boa's allocation (FAKE_TRAIN_POLL_SECONDS, default 1)
Needs BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN (boa's executor sets them, with BOA_GENERATION and WORLD_SIZE).`;

/** Work per second on w GPUs: w^0.8, a simple sublinear speedup. */
const SCALING = 0.8;
const STEP_SECONDS = 0.1;

function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        'work-seconds': { type: 'string' },
        epochs: { type: 'string' },
        speed: { type: 'string' },
        'poll-seconds': { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    // A mistyped flag is the user's slip, not a bug: what is wrong and the usage, no stack (as argparse).
    if (!String(error?.code).startsWith('ERR_PARSE_ARGS_')) throw error;
    const what = error.message.split('. ')[0]; // Node 18 adds a hint about positionals after '--'
    console.error(`fake-train: ${what[0].toLowerCase()}${what.slice(1)}; ${USAGE.split('\n')[0]}`);
    process.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const number = (flag, envName, fallback, check) => {
    const raw = values[flag] ?? process.env[envName] ?? (fallback === null ? null : String(fallback));
    if (raw === null) return null;
    const value = Number(raw);
    if (!Number.isFinite(value) || !check(value)) {
      console.error(
        `fake-train: --${flag} (${envName}) must be ${check.rule}, got ${JSON.stringify(raw)}\n${USAGE}`,
      );
      process.exit(2);
    }
    return value;
  };
  const positive = Object.assign((v) => v > 0, { rule: 'a number > 0' });
  const whole = Object.assign((v) => Number.isInteger(v) && v >= 1, { rule: 'an integer >= 1' });
  return {
    workSeconds: number('work-seconds', 'FAKE_TRAIN_WORK_SECONDS', 600, positive),
    epochs: number('epochs', 'FAKE_TRAIN_EPOCHS', null, whole),
    speed: number('speed', 'FAKE_TRAIN_SPEED', 1, positive),
    pollSeconds: number('poll-seconds', 'FAKE_TRAIN_POLL_SECONDS', 1, positive),
  };
}

/** BOA_CHECKPOINT_DIR, else a directory of this job's own under the OS temp dir (removed when done). */
function checkpointDir(job) {
  const given = job.checkpointDir;
  if (given?.startsWith('file://')) return { dir: fileURLToPath(given), temporary: false };
  if (given && /^[a-z][a-z0-9+.-]*:\/\//i.test(given)) {
    console.error(
      `fake-train: BOA_CHECKPOINT_DIR is ${given}: this example keeps its checkpoint in a local directory ` +
        '(a path or a file:// URI); give the job a volume claim or a path instead',
    );
    process.exit(2);
  }
  if (given) return { dir: given, temporary: false };
  // The token's hash keeps job 1 of one service apart from job 1 of another.
  const tag = createHash('sha256').update(job.token).digest('hex').slice(0, 12);
  return { dir: join(tmpdir(), 'boa-fake-train', `job-${job.jobId}-${tag}`), temporary: true };
}

function readCheckpoint(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    console.error(`fake-train: ignoring unreadable checkpoint ${file}: ${error.message}`);
    return null;
  }
}

function writeCheckpoint(dir, file, state) {
  mkdirSync(dir, { recursive: true });
  // Write then rename: a kill mid-write leaves the previous checkpoint whole.
  writeFileSync(`${file}.tmp`, `${JSON.stringify(state)}\n`);
  renameSync(`${file}.tmp`, file);
}

const sleep = (seconds) => new Promise((done) => setTimeout(done, seconds * 1000));

async function main() {
  const opts = options();
  let job;
  try {
    job = BoaJob.fromEnv(process.env, { pollSeconds: opts.pollSeconds });
  } catch (error) {
    console.error(`fake-train: ${error.message}`);
    process.exit(2);
  }
  const leader = job.nodeRank === 0;
  const selfLaunched = job.generation === null;
  const { dir, temporary } = checkpointDir(job);
  const file = join(dir, 'checkpoint.json');
  // Set once the class's epochs are known (below); the reports' closure reads it.
  let epoch = 0;

  // Progress reports must not slow training: boa may be restarting (a report retries for about 15 s).
  // So they go in the background, one at a time: a report due while one is still out is skipped, and
  // the next carries the epoch reached by then. One boa does not take (it knows fewer epochs than this
  // run) the client says so and returns; only a refused job (a wrong token) rejects.
  let reportInFlight = null;
  // The last report skipped, sent at the end if no later one went: the last epoch's, due as the run
  // ends, was otherwise lost whenever one was still out, and boa had the job an epoch behind.
  let skipped = null;
  // A refused report (a wrong token, a stranger at BOA_URL for a while) is said at once, then at most once
  // a minute with the count since: it printed one line per report, every 5 s (found in review).
  const refusals = { saidAt: null, unsaid: 0 };
  const send = (statEpoch, workDone) =>
    job.report(statEpoch, workDone).catch((error) => {
      const now = performance.now();
      if (refusals.saidAt !== null && now - refusals.saidAt < REFUSAL_EVERY_SECONDS * 1000) {
        refusals.unsaid += 1;
        return;
      }
      const more = refusals.unsaid ? ` (${refusals.unsaid} more since the last said)` : '';
      refusals.saidAt = now;
      refusals.unsaid = 0;
      console.error(`fake-train: progress not reported: ${error.message}${more}`);
    });
  const report = (workDone) => {
    if (!leader) return;
    if (reportInFlight) {
      skipped = { statEpoch: epoch, workDone };
      return;
    }
    skipped = null;
    reportInFlight = send(epoch, workDone).finally(() => {
      reportInFlight = null;
    });
  };

  if (selfLaunched) {
    console.log(
      `fake-train job ${job.jobId}: waiting for GPUs from boa at ${job.url} (boa gives them at a tick once it has nodes)`,
    );
    try {
      await job.waitForWidth();
    } catch (error) {
      // SIGTERM, or the job ended, before it got GPUs: a stop like any other. Else a failure.
      if (!(error instanceof BoaError) || !job.shouldStop()) throw error;
      console.log(`fake-train: ${error.message}; exiting`);
      return 0;
    }
  }
  opts.epochs ??= await classEpochs(job);
  const epochWork = opts.workSeconds / opts.epochs;
  const saved = readCheckpoint(file);
  let workInEpoch;
  [epoch, workInEpoch] = resumePoint(saved, opts.epochs, opts.workSeconds);
  let resumed = saved !== null;
  job.startPolling();

  for (;;) {
    const world = job.worldSize;
    const rate = opts.speed * world ** SCALING;
    console.log(
      `fake-train job ${job.jobId} generation ${job.generation}: WORLD_SIZE=${world} NNODES=${job.nnodes} ` +
        `NODE_RANK=${job.nodeRank}, ${resumed ? 'resumed' : 'starting'} ${inEpoch(epoch, opts.epochs)} ` +
        `(${workInEpoch.toFixed(1)} s of its work done)`,
    );
    report(workInEpoch);
    let lastReport = Date.now();
    const started = Date.now();
    while (epoch < opts.epochs && !job.shouldStop()) {
      await sleep(STEP_SECONDS);
      workInEpoch += rate * STEP_SECONDS;
      if (workInEpoch >= epochWork) {
        epoch += 1;
        workInEpoch = 0;
        console.log(
          `epoch ${epoch}/${opts.epochs} done: WORLD_SIZE=${world} NODE_RANK=${job.nodeRank} ` +
            `generation=${job.generation} after ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
        if (leader) writeCheckpoint(dir, file, checkpoint(epoch, opts.epochs, workInEpoch, job, world));
        if (epoch < opts.epochs) report(0);
        lastReport = Date.now();
      } else if (Date.now() - lastReport >= 5000) {
        report(workInEpoch);
        lastReport = Date.now();
      }
    }
    if (epoch >= opts.epochs) break;
    // boa sends a cancel as a SIGTERM too, often before a poll has seen it: asked afresh, as
    // docs/client.md advises (after a SIGTERM the client waits at most 2 s for an answer; none: a
    // checkpoint, to be safe).
    const ended =
      job.stopReason === 'SIGTERM'
        ? (await job.allocation().catch(() => job.lastAllocation))?.state
        : job.lastAllocation?.state;
    if (FINISHED_STATES.includes(ended)) {
      // Cancelled (or ended some other way): no generation will ever resume from a checkpoint.
      console.log(
        `stopping (${job.stopReason}) ${inEpoch(epoch, opts.epochs)}: the job has ended, no checkpoint written`,
      );
      if (leader && temporary) removeTemporary(dir);
      return 0;
    }
    if (leader) writeCheckpoint(dir, file, checkpoint(epoch, opts.epochs, workInEpoch, job, world));
    console.log(
      `stopping (${job.stopReason}) ${inEpoch(epoch, opts.epochs)} with ${workInEpoch.toFixed(1)} s ` +
        `of its work done: checkpoint ${leader ? `written to ${file}` : 'left to rank 0'}`,
    );
    // A self-launched job follows a rescale itself; under the executor boa starts the new replicas.
    if (!selfLaunched || job.stopReason === 'SIGTERM') return 0;
    resumed = true;
    try {
      await job.waitForWidth();
    } catch (error) {
      if (!(error instanceof BoaError)) throw error;
      console.log(`fake-train: ${error.message}; exiting`);
      return 0;
    }
  }

  console.log(`all ${opts.epochs} epochs done: WORLD_SIZE=${job.worldSize} NODE_RANK=${job.nodeRank}`);
  if (leader) {
    await reportInFlight; // not overtaken by a report of an earlier epoch
    if (skipped) await send(skipped.statEpoch, skipped.workDone);
    try {
      await job.complete();
      console.log(`job ${job.jobId} complete`);
    } catch (error) {
      // Under the executor rank 0 exiting 0 completes the job anyway.
      console.error(`fake-train: could not mark the job complete: ${error.message}`);
    }
    if (temporary) removeTemporary(dir);
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    // boa's refusal (a wrong token, a job gone) is one line; anything else is a bug: its stack.
    console.error(`fake-train: ${error instanceof BoaError ? error.message : (error.stack ?? error)}`);
    process.exit(1);
  },
);

/**
 * The statistical epochs of the job's class, as boa's allocation says them: a default of 8 had every
 * report of a 2-epoch bert job past its first refused (an operator trial). 8 when boa does not say.
 */
async function classEpochs(job) {
  const epochs = await job.statEpochs().catch(() => null);
  if (epochs !== null) return epochs;
  console.error('fake-train: boa did not say how many statistical epochs the class has: taking 8');
  return 8;
}

/**
 * Where a run is, given the epochs done: counted from 1, as `boa jobs list` and `show` count (the log
 * said "resumed at epoch 3/8" where boa showed epoch 4: found in a CLI review).
 */
function inEpoch(done, epochs) {
  return done < epochs ? `in epoch ${done + 1}/${epochs}` : `after its last epoch (${epochs}/${epochs})`;
}

function checkpoint(epoch, epochs, workInEpoch, job, world) {
  return { epoch, epochs, workInEpoch, generation: job.generation, worldSize: world };
}

/**
 * [epoch, work done in it] to resume at, in this run's epochs. A checkpoint written with another count
 * (a generation that started while boa was unreachable took 8, a bert job's next one boa's 2) is
 * converted through the work it had done: its epoch 5 of 8 read as epoch 5 of 2 ended the job with 3/8
 * of its work undone, and epoch 1 of 2 read as 1 of 8 did 3/8 again (found in review).
 */
function resumePoint(saved, epochs, workSeconds) {
  if (saved === null) return [0, 0];
  let epoch = Math.trunc(Number(saved.epoch ?? 0));
  let work = Number(saved.workInEpoch ?? 0);
  const was = saved.epochs;
  if (Number.isInteger(was) && was >= 1 && was !== epochs) {
    const done = (epoch * workSeconds) / was + work;
    const epochWork = workSeconds / epochs;
    epoch = Math.floor(done / epochWork + 1e-9);
    work = Math.max(0, done - epoch * epochWork);
  }
  return epoch >= epochs ? [epochs, 0] : [epoch, work];
}

/** The job's temp folder, and the shared boa-fake-train folder above it once no other job's is left. */
function removeTemporary(dir) {
  rmSync(dir, { recursive: true, force: true });
  try {
    rmdirSync(dirname(dir));
  } catch {
    // Another job's folder is still there (or it is gone already).
  }
}
