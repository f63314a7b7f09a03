import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import type { Workload } from '../service/ports.ts';

/** Small settings stored as JSON by key: the budget, the local node pool's state, the demo clock. */
export const settings = sqliteTable('settings', {
  key: text('key').primaryKey(),
  value: text('value', { mode: 'json' }).notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/** Job classes and their profiles (the profile file format's class object). */
export const jobClasses = sqliteTable('job_classes', {
  name: text('name').primaryKey(),
  profile: text('profile', { mode: 'json' }).notNull(),
  /** Expected arrivals per hour before the service has seen any (the estimator's prior). */
  priorRatePerHour: real('prior_rate_per_hour').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

export const jobs = sqliteTable(
  'jobs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    className: text('class_name').notNull(),
    tokenHash: text('token_hash').notNull(),
    /** waiting | running | done | cancelled | failed | lost */
    state: text('state').notNull(),
    submittedAt: integer('submitted_at').notNull(),
    startedAt: integer('started_at'),
    finishedAt: integer('finished_at'),
    /** The plan the job's widths come from, and those widths (per statistical epoch). */
    planId: integer('plan_id'),
    widths: text('widths', { mode: 'json' }).$type<number[]>(),
    /** The job's draw in [0, 1), made once at submission: it picks its share of every plan's mixture. */
    draw: real('draw'),
    statEpoch: integer('stat_epoch').notNull().default(0),
    epochStartedAt: integer('epoch_started_at'),
    /** Allocation generation when the epoch began: unchanged at its end means a clean work sample. */
    epochGeneration: integer('epoch_generation').notNull().default(0),
    /**
     * The epoch's clock started at a progress report of its generation, not at the allocation: no
     * startup allowance is taken off its duration (service/progress.ts).
     */
    epochTimedFromReport: integer('epoch_timed_from_report', { mode: 'boolean' }).notNull().default(false),
    /** GPU-seconds x speedup reported done in the current epoch, as the job's launcher reports it. */
    workDoneSeconds: real('work_done_seconds').notNull().default(0),
    width: integer('width').notNull().default(0),
    /** Node id per allocated GPU. */
    allocation: text('allocation', { mode: 'json' }).$type<string[]>().notNull(),
    /** Changes whenever the job must rescale (its allocation changed). */
    generation: integer('generation').notNull().default(0),
    /** What the executor runs (a Workload); null for a self-launched job. */
    workload: text('workload', { mode: 'json' }).$type<Workload>(),
    /** Random seed the job token is derived from, so the executor can hand replicas the token. */
    tokenSeed: text('token_seed'),
    /** Times the executor restarted the job's replicas after a failure. */
    restarts: integer('restarts').notNull().default(0),
    /** The last failure: exit code of the failed replica and why (also set when the job is lost). */
    exitCode: integer('exit_code'),
    failureReason: text('failure_reason'),
    /** A failed executed job's replicas start again no earlier than this (its restart backoff), ms. */
    restartNotBefore: integer('restart_not_before'),
    /** Lease: when a self-launched job last polled or reported (ms since the epoch). */
    lastSeenAt: integer('last_seen_at'),
    /**
     * When the job's last progress report was taken (ms since the epoch); null: none yet. Not the lease
     * above (a poll renews that too, and only for self-launched jobs): a job done with none ended
     * without saying how far it got. Migration 0010 sets it for the jobs it found (unknown then).
     */
    lastReportAt: integer('last_report_at'),
    /**
     * When boa last moved the job to a new generation (ms since the epoch); null: not since migration
     * 0011. An older generation's rank 0 that exited 0 after it had left because it saw the new one, as
     * boa's clients do; only one that ended before it finished the job (older-exits.ts).
     */
    generationSince: integer('generation_since'),
    /**
     * GPUs the job holds beyond its plan's width, lent by the idle fill (service/idle-fill.ts): kept with
     * its allocation so a restart neither books them as allocated nor places the job back at its plan's
     * width. Jobs from before migration 0012 read 0.
     */
    idleFillGpus: integer('idle_fill_gpus').notNull().default(0),
    /**
     * GPU-milliseconds booked to the job (its allocation less lent GPUs, as the ledger books them) up to
     * `gpuMsSince`; from then on it books its current allocation (service/gpu-time.ts). Null: a job from
     * before migration 0013, whose earlier GPU-time was not kept.
     */
    gpuMs: real('gpu_ms'),
    gpuMsSince: integer('gpu_ms_since'),
    /**
     * The Idempotency-Key the job was submitted with, if any: unique, so a retried or concurrent
     * submission finds this job instead of creating another (SQLite's unique index allows many NULLs).
     */
    idempotencyKey: text('idempotency_key'),
    /** SHA-256 of the submission's canonical JSON: a reused key with another request is refused. */
    requestFingerprint: text('request_fingerprint'),
  },
  (t) => [
    index('jobs_state').on(t.state),
    index('jobs_class_submitted').on(t.className, t.submittedAt),
    // The rate estimator's submissions in its window, read every minute: jobs are never pruned, and the
    // class-first index above cannot serve a range on submitted_at alone (it scanned every job).
    index('jobs_submitted').on(t.submittedAt),
    uniqueIndex('jobs_idempotency_key').on(t.idempotencyKey),
  ],
);

/** Every plan the calculator produced, with its inputs, so a decision can be explained later. */
export const plans = sqliteTable('plans', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  computedAt: integer('computed_at').notNull(),
  solver: text('solver').notNull(),
  budget: real('budget').notNull(),
  /** The budget the calculator was given: the target corrected for paid/allocated overhead. */
  planningBudget: real('planning_budget').notNull(),
  minFeasibleBudget: real('min_feasible_budget').notNull(),
  predictedAvgJctSeconds: real('predicted_avg_jct_seconds').notNull(),
  predictedGpuHoursPerHour: real('predicted_gpu_hours_per_hour').notNull(),
  plan: text('plan', { mode: 'json' }).notNull(),
  inputs: text('inputs', { mode: 'json' }).notNull(),
  solveMs: real('solve_ms').notNull(),
});

/** Nodes seen in the pool with their launch times: paid GPU-time is counted from these. */
export const ledgerNodes = sqliteTable('ledger_nodes', {
  id: text('id').primaryKey(),
  gpus: integer('gpus').notNull(),
  launchedAt: integer('launched_at').notNull(),
  lastSeenAt: integer('last_seen_at').notNull(),
  goneAt: integer('gone_at'),
});

/** Allocated GPUs over each tick interval: allocated GPU-time is the sum of gpus x seconds. */
export const allocationSamples = sqliteTable(
  'allocation_samples',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    from: integer('from_ms').notNull(),
    to: integer('to_ms').notNull(),
    gpus: integer('gpus').notNull(),
    /**
     * GPUs the plan in force expected over the interval (core/demand-ratio.ts, after its anti-windup);
     * null in samples from before it was kept, read as the GPUs allocated (no evidence either way).
     */
    expectedGpus: real('expected_gpus'),
    /**
     * The same GPUs by job class (they add up to `gpus`): where the window's budget went. Null in samples
     * from before it was kept: their GPUs are counted, their classes not known.
     */
    gpusByClass: text('gpus_by_class', { mode: 'json' }).$type<Record<string, number>>(),
  },
  (t) => [index('allocation_samples_to').on(t.to)],
);

/** Resize requests sent to the node pool: the last one is never sent twice, even across a crash. */
export const resizes = sqliteTable('resizes', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  at: integer('at').notNull(),
  target: integer('target').notNull(),
  requested: integer('requested').notNull(),
  /** requested | applied | failed | interrupted (a crash before the group answered; not its size at restart) */
  status: text('status').notNull(),
  updateId: text('update_id'),
  error: text('error'),
});

/**
 * Nodes boa chose to remove, one row each, every step written before it is sent: chosen -> cordoned ->
 * terminating -> terminated (or cancelled). After a crash the row says where it stopped, so a restart
 * neither repeats a termination nor forgets one.
 */
export const nodeRemovals = sqliteTable(
  'node_removals',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** The pool's node id (EC2 instance id on EKS). */
    nodeId: text('node_id').notNull(),
    /** The name allocations use (Kubernetes node name), when it had one. */
    nodeName: text('node_name'),
    /** scale-in | provision-timeout | over-ceiling (during an EKS update: nodes/eks-update.ts) */
    reason: text('reason').notNull(),
    /** chosen | cordoning | cordoned | terminating | terminated | cancelled */
    state: text('state').notNull(),
    chosenAt: integer('chosen_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    terminatedAt: integer('terminated_at'),
    /**
     * How the termination ended: sent, already-gone (terminated by someone else, or before a crash); of a
     * cancelled one, not-listed (its node left the listing before anything was sent to it).
     */
    outcome: text('outcome'),
    error: text('error'),
  },
  (t) => [index('node_removals_state').on(t.state)],
);

/**
 * Submissions from before the service's own record, imported so that its rate window starts full
 * (`POST /v1/history`): a team's past job log, or traces of days like the ones to come. Never run;
 * read only by the rate estimator, beside the jobs' own submissions.
 */
export const historyImports = sqliteTable(
  'history_imports',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** SHA-256 of the import's canonical content: the same import twice is one import. */
    digest: text('digest').notNull(),
    /** Where it came from, as the operator named it (a file name), for the listing. */
    source: text('source').notNull(),
    /** Start of the span the history covers: hours in it with no arrivals count as observed. */
    observedFrom: integer('observed_from').notNull(),
    firstArrivalAt: integer('first_arrival_at').notNull(),
    lastArrivalAt: integer('last_arrival_at').notNull(),
    arrivals: integer('arrivals').notNull(),
    importedAt: integer('imported_at').notNull(),
  },
  (t) => [uniqueIndex('history_imports_digest').on(t.digest)],
);

export const pastArrivals = sqliteTable(
  'past_arrivals',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    importId: integer('import_id').notNull(),
    className: text('class_name').notNull(),
    submittedAt: integer('submitted_at').notNull(),
  },
  (t) => [index('past_arrivals_submitted').on(t.submittedAt), index('past_arrivals_import').on(t.importId)],
);

/**
 * The newest report sequence number boa took from each sender (a job client instance) of a job's
 * progress reports: a report numbered no higher from the same sender (an attempt a proxy forwarded
 * late) changes nothing (service/report-sequence.ts). The newest senders of a job are kept.
 */
export const reportSequences = sqliteTable(
  'report_sequences',
  {
    jobId: integer('job_id').notNull(),
    sender: text('sender').notNull(),
    number: integer('number').notNull(),
    /** When its newest report was taken (ms since the epoch): the least recent sender goes first. */
    takenAt: integer('taken_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.sender] })],
);
