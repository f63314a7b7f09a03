import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { bearer } from '../auth.ts';
import type { ApiEnv } from '../env.ts';
import { IdempotencyKeyHeaders } from '../idempotency-key.ts';
import { AllocationView, JobListView, JobView, RegisteredJobView } from '../responses-jobs.ts';
import {
  errors,
  bodyErrors,
  ErrorSchema,
  JobIdParam,
  JobLogsQuery,
  jsonBody,
  jsonContent,
  ListJobsQuery,
  ProgressBody,
  RegisterJobBody,
} from '../schemas.ts';
import { ServiceError } from '../../service/errors.ts';
import { followJobLogs, jobLogs } from '../../service/job-logs.ts';
import { textStream } from '../text-stream.ts';
import { workloadWarning } from '../workload.ts';
import { LOG_KEEPALIVE_HEADER } from '../../core/log-keepalive.ts';
import { allocationView } from '../../service/allocation-view.ts';
import { gpuPricePerHour, jobView } from '../../service/views.ts';
import { waitContext } from '../../service/waiting-for.ts';
import { jobFromRow } from '../../service/jobs.ts';
import { budgetQueue } from '../../service/budget-queue.ts';
import { stoppingJobs } from '../stopping-jobs.ts';
import { listedStates } from '../list-jobs-query.ts';

const notFound = { 404: jsonContent(ErrorSchema, 'no such job') };
const conflict = { 409: jsonContent(ErrorSchema, 'the job is not in a state that allows this') };

/** The job token is checked here; an operator token is accepted for every job. */
function jobToken(c: { get(k: 'operator'): boolean; req: { header(n: string): string | undefined } }) {
  return c.get('operator') ? undefined : bearer(c.req.header('authorization'));
}

/**
 * Logs followed at once, per service: each holds a connection to the API server (Kubernetes) or a
 * file poll (local) for as long as its replica runs, and a job token may open as many as it likes.
 */
const MAX_FOLLOWED_LOGS = 64;
/**
 * A job's own token follows at most this many of its logs at once, and job tokens together leave the
 * operator OPERATOR_FOLLOWS (found in review: one job opening 64 follows refused every other, the
 * operator's `boa jobs logs -f` and the dashboard's too).
 */
const MAX_FOLLOWED_PER_JOB = 4;
const OPERATOR_FOLLOWS = 16;

export function jobRoutes(app: OpenAPIHono<ApiEnv>) {
  let followed = 0;
  const followedByJob = new Map<number, number>();
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/jobs',
      operationId: 'registerJob',
      summary: 'Register a training job: returns its id and its own token',
      request: { headers: IdempotencyKeyHeaders, ...jsonBody(RegisterJobBody) },
      responses: {
        201: {
          ...jsonContent(RegisteredJobView, 'registered, or a submission with its Idempotency-Key replayed'),
          headers: {
            'Idempotent-Replayed': {
              description: 'true when the Idempotency-Key was seen before: no new job, the earlier one',
              schema: { type: 'string', enum: ['true'] },
            },
          },
        },
        ...bodyErrors,
        422: jsonContent(
          ErrorSchema,
          'the workload cannot run here (a checkpoint volume claim missing, not ReadWriteMany, Lost, or' +
            ' Pending in a WaitForFirstConsumer class), the Idempotency-Key was used for a different request, or' +
            " (class_left_out) the class is left out of plans: stored past the speedup-table bound (GET /v1/status's classesLeftOut)",
        ),
        503: jsonContent(
          ErrorSchema,
          'a database started afresh registers no job with a workload until the executor has answered once' +
            ' (executor_not_ready); a checkpoint volume claim still binding (claim_not_bound: try again once' +
            ' Bound), that boa may not read (executor_forbidden: redeploy the stack), or that could not be read' +
            ' (executor_unavailable: the Kubernetes API server out of reach)',
        ),
      },
    }),
    async (c) => {
      if (!c.get('operator'))
        throw new ServiceError(401, 'unauthorized', 'registering a job needs the operator token');
      const input = c.req.valid('json');
      const key = c.req.valid('header')['idempotency-key'];
      const { job, token, replayed } = await c.var.service.submitJob(
        input.class,
        input.name,
        input.workload,
        key,
      );
      const registered = {
        id: job.id,
        token,
        job: jobView(
          job,
          waitContext(c.var.service.state, c.var.service.deps.config.gpusPerNode),
          c.var.service.deps.clock.now(),
          gpuPricePerHour(c.var.service.deps.config),
        ),
        warning: workloadWarning(
          c.var.service.deps.executor?.kind,
          input.workload,
          c.var.service.deps.config.leaseSeconds,
        ),
      };
      if (!replayed) return c.json(registered, 201);
      c.header('Idempotent-Replayed', 'true');
      return c.json({ ...registered, replayed: true as const, tokenReplaced: replayed.tokenReplaced }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/jobs',
      operationId: 'listJobs',
      summary: 'List jobs',
      request: { query: ListJobsQuery },
      responses: { 200: jsonContent(JobListView, 'jobs'), ...errors },
    }),
    (c) => {
      if (!c.get('operator'))
        throw new ServiceError(401, 'unauthorized', 'listing jobs needs the operator token');
      const { state, limit, class: className, name, before, order, stopping } = c.req.valid('query');
      const states = listedStates({ state, order, before, stopping });
      const active = c.var.service.state.jobs;
      const waits = waitContext(c.var.service.state, c.var.service.deps.config.gpusPerNode); // once: it reads every node
      const repo = c.var.service.deps.repo;
      // The row listed, not read again: a query per job cost 0.4 ms, half a second for the default
      // 1000 once that many had ended, the tick and every request waiting (found in a long-life trial).
      const jobs = stopping
        ? stoppingJobs(waits.stopping, active, (id) => repo.getJob(id), limit, {
            states,
            className,
            name,
            beforeId: before,
          })
        : order === 'queue'
          ? budgetQueue(active.values(), limit, { className, name })
          : repo
              .listJobs(limit, { states, className, name, beforeId: before, order })
              .map((row) => active.get(row.id) ?? jobFromRow(row));
      // A typo would list nothing as if no job had run: a class neither known nor held by any job is
      // refused (a deleted class's jobs still list, with any other filter too).
      const classes = c.var.service.state.classes;
      if (
        className !== undefined &&
        jobs.length === 0 &&
        !classes.has(className) &&
        repo.listJobs(1, { className }).length === 0
      )
        throw new ServiceError(
          400,
          'unknown_class',
          `unknown class "${className}"; known classes: ${[...classes.keys()].join(', ')}`,
          'class',
        );
      return c.json(
        {
          jobs: jobs.map((job) =>
            jobView(job, waits, c.var.service.deps.clock.now(), gpuPricePerHour(c.var.service.deps.config)),
          ),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/jobs/{id}',
      operationId: 'getJob',
      summary: 'One job',
      request: { params: JobIdParam },
      responses: { 200: jsonContent(JobView, 'the job'), ...errors, ...notFound },
    }),
    (c) =>
      c.json(
        jobView(
          c.var.service.job(c.req.valid('param').id, jobToken(c)),
          waitContext(c.var.service.state, c.var.service.deps.config.gpusPerNode),
          c.var.service.deps.clock.now(),
          gpuPricePerHour(c.var.service.deps.config),
        ),
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/jobs/{id}/logs',
      operationId: 'getJobLogs',
      summary: "The last lines a replica of the job wrote (executed jobs: the local process's or pod's log)",
      request: { params: JobIdParam, query: JobLogsQuery },
      responses: {
        200: {
          content: { 'text/plain': { schema: z.string() } },
          description:
            'the lines; header boa-generation names the generation they are from; with follow=true, streamed until the replica ends, and headers boa-log-cursor and boa-log-skip say where they start (a follower cut off asks again with cursor and skip plus the bytes it got); a follower that sends header boa-log-keepalive (any value) gets it back with the seconds between keepalives, NUL k after each such silence, and each NUL of the log as NUL NUL; boa-log-gap: true when the position asked for is no longer in the log (rotated away), the text then going on from its newest line',
        },
        ...errors,
        404: jsonContent(ErrorSchema, 'no such job, or no log kept for that replica'),
        429: jsonContent(ErrorSchema, 'too many logs followed at once'),
        409: jsonContent(ErrorSchema, 'the service runs no jobs (no executor)'),
        503: jsonContent(ErrorSchema, 'the log could not be read (the cloud refused or did not answer)'),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { cursor, skip, ...query } = c.req.valid('query');
      if (cursor === undefined && skip !== undefined)
        throw new ServiceError(
          400,
          'invalid',
          'skip counts bytes past a cursor: give the cursor too',
          'skip',
        );
      if (cursor !== undefined && !query.follow)
        throw new ServiceError(
          400,
          'invalid',
          'cursor says where a followed log goes on from: give follow=true too',
          'cursor',
        );
      // A HEAD is answered by this handler with its body dropped, never cancelled: a follow opened for
      // it would hold its slot (and the executor's follow) until a restart (found in review). It gets
      // the headers of a plain read.
      if (query.follow && c.req.method !== 'HEAD') {
        const byJob = jobToken(c) !== undefined;
        const limit = byJob ? MAX_FOLLOWED_LOGS - OPERATOR_FOLLOWS : MAX_FOLLOWED_LOGS;
        if (followed >= limit)
          throw new ServiceError(
            429,
            'too_many_followed_logs',
            `${followed} logs are followed already, the most this service follows at once${byJob ? ' for jobs' : ''}: stop one, or read without follow`,
          );
        if (byJob && (followedByJob.get(id) ?? 0) >= MAX_FOLLOWED_PER_JOB)
          throw new ServiceError(
            429,
            'too_many_followed_logs',
            `job ${id} follows ${MAX_FOLLOWED_PER_JOB} of its logs already, the most a job's own token may at once: stop one, or read without follow`,
          );
        const stop = new AbortController();
        followed += 1;
        if (byJob) followedByJob.set(id, (followedByJob.get(id) ?? 0) + 1);
        stop.signal.addEventListener(
          'abort',
          () => {
            followed -= 1;
            if (!byJob) return;
            const left = (followedByJob.get(id) ?? 1) - 1;
            if (left > 0) followedByJob.set(id, left);
            else followedByJob.delete(id);
          },
          { once: true },
        );
        c.req.raw.signal.addEventListener('abort', () => stop.abort(), { once: true });
        const from = cursor === undefined ? undefined : { cursor, skip: skip ?? 0 };
        const log = await followJobLogs(
          c.var.service,
          id,
          { ...query, from },
          stop.signal,
          jobToken(c),
        ).catch((error: unknown) => {
          stop.abort();
          throw error;
        });
        // Keepalives only for a follower that asks (boa's CLI and dashboard): curl's output stays the log.
        const keepaliveSeconds =
          c.req.header(LOG_KEEPALIVE_HEADER) === undefined
            ? undefined
            : c.var.service.deps.config.logKeepaliveSeconds;
        const keepaliveMs = keepaliveSeconds === undefined ? undefined : keepaliveSeconds * 1000;
        return c.body(textStream(log.chunks, stop, keepaliveMs), 200, {
          'content-type': 'text/plain; charset=utf-8',
          ...(keepaliveSeconds === undefined ? {} : { [LOG_KEEPALIVE_HEADER]: String(keepaliveSeconds) }),
          'boa-generation': String(log.generation),
          // Where the text starts in the log: a follower cut off asks again from there plus what it got.
          'boa-log-cursor': log.from.cursor,
          'boa-log-skip': String(log.from.skip),
          // The position asked for is gone from the log: lines between may be missing.
          ...(log.gap ? { 'boa-log-gap': 'true' } : {}),
          // Through a proxy that buffers (nginx), lines would come in bursts.
          'x-accel-buffering': 'no',
        }) as never;
      }
      const log = await jobLogs(c.var.service, id, query, jobToken(c));
      return c.body(log.text, 200, {
        'content-type': 'text/plain; charset=utf-8',
        'boa-generation': String(log.generation),
      }) as never;
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/jobs/{id}/allocation',
      operationId: 'getAllocation',
      summary: 'Where the job runs now: width, nodes, and a generation that changes when it must rescale',
      request: { params: JobIdParam },
      responses: { 200: jsonContent(AllocationView, 'allocation'), ...errors, ...notFound },
    }),
    (c) => {
      const job = c.var.service.job(c.req.valid('param').id, jobToken(c));
      // A poll renews a self-launched job's lease (leaseSeconds); only active jobs hold one. The
      // operator token's too: a launcher may hold it (the demo's does), and the dashboard polls no
      // allocation (a review asked; renewing on the job's token alone left the demo's jobs lost).
      if (job.state === 'waiting' || job.state === 'running') c.var.service.leases.touch(job);
      return c.json(allocationView(c.var.service, job), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/jobs/{id}/progress',
      operationId: 'reportProgress',
      summary: 'Report the statistical epoch the job has reached',
      request: { params: JobIdParam, ...jsonBody(ProgressBody) },
      responses: {
        200: jsonContent(AllocationView, 'allocation after the report'),
        ...bodyErrors,
        ...notFound,
        ...conflict,
      },
    }),
    (c) => {
      const { statEpoch, workDoneSeconds, generation, sequence } = c.req.valid('json');
      const job = c.var.service.reportProgress(
        c.req.valid('param').id,
        statEpoch,
        jobToken(c),
        workDoneSeconds,
        generation,
        sequence,
      );
      return c.json(allocationView(c.var.service, job), 200);
    },
  );

  for (const [action, state] of [
    ['complete', 'done'],
    ['cancel', 'cancelled'],
  ] as const) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/v1/jobs/{id}/${action}`,
        operationId: action === 'complete' ? 'completeJob' : 'cancelJob',
        summary: action === 'complete' ? 'The job finished' : 'Cancel the job',
        request: { params: JobIdParam },
        responses: { 200: jsonContent(JobView, 'the job'), ...errors, ...notFound, ...conflict },
      }),
      (c) => {
        const job = c.var.service.finishJob(c.req.valid('param').id, state, jobToken(c));
        // Its replicas get their SIGTERM now, not at the executor's next check (up to
        // replicaCheckSeconds) or the next tick: the grace a cancel promises starts at the cancel.
        c.var.service.execution.reconcile();
        return c.json(
          jobView(
            job,
            waitContext(c.var.service.state, c.var.service.deps.config.gpusPerNode),
            c.var.service.deps.clock.now(),
            gpuPricePerHour(c.var.service.deps.config),
          ),
          200,
        );
      },
    );
  }
}
