// The job side of boa for Node (plain ESM, no dependencies): the same surface as
// clients/python/boa_job.py. Read the allocation, report progress, finish, and know when to stop.
//
//   const job = BoaJob.fromEnv().startPolling();
//   while (!done) {
//     await trainABit();
//     if (job.shouldStop()) { await saveCheckpoint(); process.exit(0); }
//     await job.report(statEpoch, workDoneSeconds);
//   }
//   await job.complete();
//
// Under boa's executor, which starts the next generation; a self-launched job waits for GPUs and
// carries on instead. See docs/client.md for both, and the protocol.

/* global process, console, fetch, AbortSignal, URL, setTimeout, clearTimeout, performance */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Under boa's local executor: tells it a SIGTERM reached the job, so an exit 0 after one that boa did
 * not send (`pkill node`) is a stop from outside, not the job's end.
 */
function markSigterm(file) {
  if (!file) return;
  try {
    // Its pid: the supervisor counts the command's own process only, not a child that has a client too.
    writeFileSync(file, String(process.pid));
  } catch {
    // Its folder gone: the exit then reads as the job's end, as without the file.
  }
}

/** Job states after which the job has no allocation any more. */
export const FINISHED_STATES = ['done', 'cancelled', 'failed', 'lost'];
/** boa's answer to a report for a job that is no longer waiting or running. */
const ENDED_CODES = ['not_active', 'already_finished'];

/** The most work a report may say (boa's BOUNDS.workSeconds): above it boa refuses the whole report. */
const MAX_WORK_SECONDS = 1e9;
/** The highest statEpoch boa takes for any class (boa's BOUNDS.statEpoch). */
const MAX_STAT_EPOCH = 1000;

/** A NaN or an infinity, which JSON cannot carry (JSON.stringify writes null). */
const nonFinite = (value) => typeof value === 'number' && !Number.isFinite(value);

export class BoaError extends Error {
  name = 'BoaError';
}
/** The environment (or the options) do not say which job this is or where boa is. */
export class BoaConfigError extends BoaError {
  name = 'BoaConfigError';
}
/** boa refused the request (4xx), or still failed after the retries (5xx). */
export class BoaHTTPError extends BoaError {
  name = 'BoaHTTPError';
  constructor(status, code, message, field) {
    super(`boa answered ${status} ${code}: ${message}`);
    Object.assign(this, { status, code, detail: message, field });
  }
}
/**
 * A 200 that is not boa's answer (a captive portal's page, another service at BOA_URL). Inside the client
 * only: callers see a BoaError, as before.
 */
class NotBoaAnswer extends BoaError {
  name = 'BoaError';
}
/** A report's attempt not made: a newer report of the same or a later epoch was made meanwhile. */
class Superseded extends BoaError {
  name = 'BoaError';
}
/** boa could not be reached after the retries; `reason` says why (ECONNREFUSED, timed out after 10 s). */
export class BoaUnavailable extends BoaError {
  name = 'BoaUnavailable';
  constructor(message, reason = null) {
    super(message);
    this.reason = reason;
  }
}

function envInt(env, name, fallback) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw))
    throw new BoaConfigError(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/**
 * Refuses what cannot be boa's address: every request to it would fail like a boa restarting, and be
 * retried for ever, with nothing said.
 */
function checkUrl(name, url) {
  const text = String(url);
  const problem = urlProblem(text);
  if (problem !== null)
    throw new BoaConfigError(
      `${name} must be an absolute http:// or https:// URL such as http://127.0.0.1:8080, got ` +
        `${JSON.stringify(text)}: ${problem}`,
    );
}

/** What is wrong with a URL for boa, or null; the same rules as the Python client's. */
function urlProblem(text) {
  if (/\s/.test(text)) return 'it contains whitespace';
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1];
  if (scheme === undefined) {
    if (!/^https?:/i.test(text))
      return `it has no scheme (did you mean "http://${text.replace(/^\/+/, '')}"?)`;
    return 'http: or https: must be followed by //';
  }
  if (!['http', 'https'].includes(scheme.toLowerCase())) return `its scheme is ${scheme}://`;
  const authority = /^[^:]+:\/\/([^/?#]*)/.exec(text)?.[1] ?? '';
  // fetch refuses such a URL at every attempt
  if (authority.includes('@')) return "it has a user or password (the client sends the job's token)";
  const [, host, port = ''] = /^(\[[^\]]*\]|[^:[\]]*)(?::(.*))?$/.exec(authority) ?? [];
  if (host === '') return 'it has no host';
  if (port !== '' && !(/^\d+$/.test(port) && Number(port) >= 1 && Number(port) <= 65535))
    return 'its port is not a number from 1 to 65535';
  try {
    new URL(text);
  } catch {
    return 'it is not a valid URL';
  }
  if (/[?#]/.test(text)) return 'it has a query or fragment (the client appends /v1/jobs/... to it)';
  return null;
}

/**
 * Why boa would refuse this statEpoch, or null: a NaN or infinity (which JSON cannot carry), or not an
 * integer from 0 to the class's last statistical epoch (boa's BOUNDS.statEpoch while the client has
 * not seen the class's). The same rules as the Python client's.
 */
function epochProblem(statEpoch, statEpochs) {
  if (nonFinite(statEpoch)) return `statEpoch must be a finite number, got ${statEpoch}`;
  const most = Number.isInteger(statEpochs) && statEpochs >= 1 ? statEpochs - 1 : MAX_STAT_EPOCH;
  if (Number.isInteger(statEpoch) && statEpoch >= 0 && statEpoch <= most) return null;
  return `statEpoch must be an integer from 0 to ${most}, got ${shown(statEpoch)}`;
}

/** A value as a message shows it: a string quoted, so "3" is not read as the number 3. */
function shown(value) {
  try {
    return typeof value === 'string' ? JSON.stringify(value) : String(value);
  } catch {
    return typeof value; // an object without a toString
  }
}

/**
 * A job id (from 1) or generation (from 0) as a number: a number, or a string of digits. Anything else
 * requested another job's routes (1.5, "abc" as NaN), or was retried as boa refusing. The same rules as
 * the Python client's.
 */
function checkedId(name, value, least = 1) {
  const number = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (Number.isSafeInteger(number) && number >= least) return number;
  throw new BoaConfigError(`${name} must be a whole number from ${least}, got ${shown(value)}`);
}

/**
 * Refuses options no request can work with: a negative retries retried for ever (the count never
 * reached it), a pollSeconds of 0 polled boa in a busy loop, a timeout of 0 failed every request.
 */
function checkOptions(options) {
  for (const [name, value] of Object.entries(options)) {
    const positive = /^(pollSeconds|timeoutSeconds|sigtermTimeoutSeconds)$/.test(name);
    const ok =
      name === 'retries'
        ? Number.isSafeInteger(value) && value >= 0
        : typeof value === 'number' && Number.isFinite(value) && (positive ? value > 0 : value >= 0);
    if (!ok) {
      const allowed =
        name === 'retries' ? 'a whole number from 0' : positive ? 'a number above 0' : 'a number from 0';
      throw new BoaConfigError(`${name} must be ${allowed}, got ${shown(value)}`);
    }
  }
}

export class BoaJob {
  #stopReason = null;
  #sigterm = false;
  /**
   * Whether the program has asked whether to stop (shouldStop, stopReason, waitForWidth). Until it has,
   * a SIGTERM keeps Node's default (the process ends): a program that only reports never looks, and the
   * listener swallowed boa's SIGTERM until the SIGKILL at the end of the grace period (120 s a rescale
   * or cancel, with nothing said; found in a newcomer review).
   */
  #heeded = false;
  #stopKind = null;
  #lastAllocation = null;
  /**
   * The allocation the running generation was started on (waitForWidth adopted it): the launch values
   * come from it, not from the newest poll, which may already hold the next generation's width (0 for a
   * pause) while this one is still running until it stops (found in review).
   */
  #adoptedAllocation = null;
  #pollError = null;
  #closed = false;
  #pollTimer = null;
  #onSigterm = null;
  /** Ends the pause of a waitForWidth, for SIGTERM and close(). */
  #wakers = new Set();
  #runByExecutor;
  /** When waitForWidth last warned that boa is unreachable or failing; null: not since it answered. */
  #warnedAt = null;
  /** When report() last warned that a report was not taken. */
  #reportWarnedAt = null;
  /**
   * The body of the newest report boa did not take because it was unreachable or failing (a restart):
   * the background poll sends it again until boa takes it or a newer report replaces it.
   */
  #unsentReport = null;
  /**
   * The reports (bodies) made and not yet superseded by a newer one of the same or a later epoch: only
   * these are sent, or sent again. A retry or a resend of an older one landed after the newer report
   * and put boa's workDoneSeconds back until the next report (found in review).
   */
  #liveReports = new Set();
  /**
   * Progress reports go to boa one attempt at a time, in the order they were made: a resend held up on
   * its way (a slow proxy) otherwise reached boa after the newer report made meanwhile.
   */
  #reportLine = Promise.resolve();
  /**
   * Each report's place among this client's, sent as its `sequence`: boa takes nothing from one numbered
   * no higher than a report it already took from this sender. An attempt given up on (timed out) may
   * still be forwarded by a proxy after the newer report, and its lower workDoneSeconds was taken.
   * Another sender for each client made: each replica, each process (a restart counts from 1 again).
   */
  #reportSender = randomBytes(8).toString('hex');
  #reportNumber = 0;
  /** False once boa refused `sequence` as a field it does not know (a boa from before it). */
  #sendSequence = true;
  /** BOA_URL_FILE (fromEnv only): where boa's local executor writes its address when it moves. */
  #urlFile = null;

  constructor({
    url,
    jobId,
    token,
    generation,
    env = process.env,
    pollSeconds = 10,
    timeoutSeconds = 10,
    sigtermTimeoutSeconds = 2,
    retries = 5,
    backoffSeconds = 0.5,
    maxBackoffSeconds = 8,
    handleSigterm = true,
    warnEverySeconds = 60,
  }) {
    for (const [name, value] of Object.entries({ url, jobId, token }))
      if (value === undefined || value === null || value === '')
        throw new BoaConfigError(`${name} is required`);
    checkUrl('url', url);
    this.url = String(url).replace(/\/+$/, '');
    this.jobId = checkedId('jobId', jobId);
    // boa's tokens are base64url: surrounding whitespace (a token read from a file or a Secret with its
    // newline) is dropped, and anything else that cannot go in a header is refused here, never echoed.
    this.token = String(token).trim();
    if (!/^[\x21-\x7e]+$/.test(this.token))
      throw new BoaConfigError(
        'the job token (BOA_JOB_TOKEN) must be one word of printable ASCII (not shown)',
      );
    // null until a self-launched job learns it from its first non-zero allocation.
    this.generation =
      generation === undefined || generation === null ? null : checkedId('generation', generation, 0);
    // BOA_GENERATION is set only by boa's executor, which stops the replicas it no longer wants itself.
    this.#runByExecutor = this.generation !== null;
    this.env = { ...env };
    const timing = {
      pollSeconds,
      timeoutSeconds,
      sigtermTimeoutSeconds,
      retries,
      backoffSeconds,
      maxBackoffSeconds,
      warnEverySeconds,
    };
    checkOptions(timing);
    Object.assign(this, timing);
    if (handleSigterm) {
      // A listener replaces Node's default (exit), so the training loop gets to checkpoint.
      this.#onSigterm = () => {
        this.#sigterm = true;
        markSigterm(process.env.BOA_SIGTERM_FILE);
        this.#wake();
        if (!this.#heeded) this.#sigtermUnheeded();
      };
      process.on('SIGTERM', this.#onSigterm);
    }
  }

  /** A SIGTERM the program will never look at: it does what it does without the client. */
  #sigtermUnheeded() {
    process.off('SIGTERM', this.#onSigterm);
    this.#onSigterm = null;
    // The program's own listener (or another client's) decides what SIGTERM does.
    if (process.listenerCount('SIGTERM') > 0) return;
    console.warn(
      `boa job ${this.jobId}: SIGTERM before this program asked shouldStop(): it ends, as without the ` +
        'client (to checkpoint on a rescale, check job.shouldStop() in the training loop: docs/client.md)',
    );
    process.kill(process.pid, 'SIGTERM');
  }

  /**
   * Builds the client from BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN (and BOA_GENERATION if set). With
   * BOA_URL_FILE set (boa's local executor sets it), the file is re-read whenever boa stops answering
   * (refused, reset, DNS, timeout), and a valid URL there other than the current one is reported to
   * from then on, with one warning: a boa restarted at another address is followed.
   */
  static fromEnv(env = process.env, options = {}) {
    const missing = ['BOA_URL', 'BOA_JOB_ID', 'BOA_JOB_TOKEN'].filter((name) => !env[name]);
    if (missing.length > 0) {
      throw new BoaConfigError(
        `missing environment variable ${missing.join(', ')}: boa's executor sets BOA_URL, BOA_JOB_ID and ` +
          'BOA_JOB_TOKEN; a self-launched job sets them to the URL of the service and the id and token ' +
          '`boa jobs submit` printed',
      );
    }
    checkUrl('BOA_URL', env.BOA_URL);
    const job = new BoaJob({
      url: env.BOA_URL,
      jobId: checkedId('BOA_JOB_ID', envInt(env, 'BOA_JOB_ID')),
      token: env.BOA_JOB_TOKEN,
      generation: ((g) => (g === null ? null : checkedId('BOA_GENERATION', g, 0)))(
        envInt(env, 'BOA_GENERATION', null),
      ),
      env,
      ...options,
    });
    // Only here: a url given to the constructor is the caller's word, which no file overrides.
    job.#urlFile = env.BOA_URL_FILE || null;
    return job;
  }

  // ---- the launch environment (torchrun's names) ----

  /** The allocation the launch values fall back to: the adopted one, else the last seen. */
  get #launchAllocation() {
    return this.#adoptedAllocation ?? this.#lastAllocation;
  }
  /** GPUs of the whole job: WORLD_SIZE, else the width of the allocation this generation runs on. */
  get worldSize() {
    return envInt(this.env, 'WORLD_SIZE', this.#launchAllocation?.width ?? 0);
  }
  /** Nodes of the placement: NNODES, else the adopted allocation's (a self-launched job), else 1. */
  get nnodes() {
    return envInt(this.env, 'NNODES', this.#launchAllocation?.nodes?.length || 1);
  }
  get nodeRank() {
    return envInt(this.env, 'NODE_RANK', 0);
  }
  /** GPUs on this node: NPROC_PER_NODE, else this node's in the last allocation, else the world size. */
  get nprocPerNode() {
    const node = this.#launchAllocation?.nodes?.[this.nodeRank];
    return envInt(this.env, 'NPROC_PER_NODE', node?.gpus ?? this.worldSize);
  }
  /** Global rank of this node's first worker: BOA_FIRST_RANK (nodes can hold different GPU counts). */
  get firstRank() {
    const before = this.#launchAllocation?.nodes?.slice(0, this.nodeRank);
    const fallback = before
      ? before.reduce((sum, node) => sum + node.gpus, 0)
      : this.nodeRank * this.nprocPerNode;
    return envInt(this.env, 'BOA_FIRST_RANK', fallback);
  }
  get masterAddr() {
    return this.env.MASTER_ADDR || '127.0.0.1';
  }
  get masterPort() {
    return envInt(this.env, 'MASTER_PORT', 29500);
  }
  /**
   * BOA_CHECKPOINT_DIR, or null when the job has no checkpoint location. The local executor sets it
   * for every process it starts (--checkpoint, else the job's own --env value, else a folder of the
   * job's own); on Kubernetes only --checkpoint or --checkpoint-claim (or --env) does; a self-launched
   * job (boa starts no process) gets none.
   */
  get checkpointDir() {
    return this.env.BOA_CHECKPOINT_DIR || null;
  }

  // ---- the API ----

  /** The job's allocation now: {jobId, state, width, nodes, generation, statEpoch, statEpochs}. */
  async allocation() {
    return this.#observe(await this.#request('GET', `/v1/jobs/${this.jobId}/allocation`));
  }

  /**
   * The statistical epochs of the job's class (a report takes statEpoch 0 to this less 1), from the
   * last allocation seen, else asked; null when boa does not say (one older than the field). Rejects
   * as allocation() does.
   */
  async statEpochs() {
    const n = (this.#lastAllocation ?? (await this.allocation()))?.statEpochs;
    return Number.isInteger(n) && n >= 1 ? n : null;
  }

  /**
   * Reports the statistical epoch reached (and 1-GPU seconds of work done in it); returns the
   * allocation. A report boa does not take never stops training: boa unreachable or failing
   * (restarting), or refusing the report itself (an epoch outside the class's range, one below an
   * earlier report after a restart without a checkpoint, a non-integer) is said with console.warn (at
   * once, then at most every warnEverySeconds) and the last allocation seen is returned. Rejects with
   * a BoaHTTPError only when boa refuses the job (401, 403, 404: a wrong token or job id). One not
   * taken because boa was unreachable or failing is kept, and the background poll (startPolling) sends
   * it again until boa takes it or a newer report replaces it.
   *
   * A statEpoch boa would refuse (NaN, infinite, not an integer, below 0, above the class's last
   * statistical epoch) is not sent (warned the same way); a workDoneSeconds boa would refuse (NaN,
   * infinite, below 0, above 1e9, not a number; easily a loss-derived figure) is left out, warned, and
   * the epoch reported.
   */
  async report(statEpoch, workDoneSeconds) {
    // JSON has no NaN: JSON.stringify sent null, boa refused the whole report, and a bad work figure
    // lost the epoch with it (found in a trial, with the Python client). Both clients refuse them here.
    const epochWrong = epochProblem(statEpoch, this.#lastAllocation?.statEpochs);
    if (epochWrong !== null) {
      // Not sent, so not kept either: sent during an outage, it replaced the report kept to send again
      // (5.5 or statEpochs itself "covers" 5), which boa then refused, and the epoch kept was lost
      // (failure-mode review).
      this.#warnReport(`progress report not taken, training goes on: ${epochWrong}: nothing sent`);
      return { ...(this.#lastAllocation ?? {}) };
    }
    const body = { statEpoch };
    // boa refuses the whole report (400) for work below 0 or above 1e9 (src/api/bounds.ts), as for NaN;
    // a string ("3.5") too.
    if (
      workDoneSeconds !== undefined &&
      workDoneSeconds !== null &&
      !(typeof workDoneSeconds === 'number' && workDoneSeconds >= 0 && workDoneSeconds <= MAX_WORK_SECONDS)
    ) {
      // The epoch is what widens or narrows the job; work is optional, so it goes without.
      const need = nonFinite(workDoneSeconds) ? 'a finite number' : `a number from 0 to ${MAX_WORK_SECONDS}`;
      this.#warnReport(
        `workDoneSeconds must be ${need}, got ${shown(workDoneSeconds)}: statEpoch ${statEpoch} reported without it`,
      );
    } else if (workDoneSeconds !== undefined && workDoneSeconds !== null)
      body.workDoneSeconds = workDoneSeconds;
    // The generation this replica runs: a report landing after a rescale or restart (a retry, say)
    // then changes nothing (a job boa runs) or does not time the epoch it starts (self-launched).
    if (this.generation !== null) body.generation = this.generation;
    // Made here, not per attempt: a retry or a resend is the same report, numbered the same.
    if (this.#sendSequence) body.sequence = { sender: this.#reportSender, number: ++this.#reportNumber };
    this.#supersede(body);
    try {
      const alloc = await this.#sendReport(body);
      this.#liveReports.delete(body);
      return alloc;
    } catch (error) {
      // A newer report of the same or a later epoch was made while this one waited to be retried: that
      // one goes instead, and says what this one would have.
      if (error instanceof Superseded) return { ...(this.#lastAllocation ?? {}) };
      const kept = this.#unsentReport;
      if (failedSend(error) && this.#liveReports.has(body) && (kept === null || notAfter(kept, body))) {
        // Not lost: a loop that reports each epoch once would leave boa an epoch behind (its plan and
        // the epoch's clock) until the next one, hours later. The poll sends it again.
        if (kept !== null) this.#liveReports.delete(kept);
        this.#unsentReport = body;
      } else this.#liveReports.delete(body);
      if (error instanceof BoaHTTPError && [401, 403, 404].includes(error.status)) throw error;
      if (!(error instanceof BoaError)) throw error;
      // The job ended (cancelled, lost, done): shouldStop() says so, in a poll's words.
      if (error instanceof BoaHTTPError && ENDED_CODES.includes(error.code)) {
        await this.allocation().catch(() => undefined);
        this.#setStop(`job ended (${error.detail ?? error.message})`, 'ended');
        return { ...(this.#lastAllocation ?? {}) };
      }
      this.#warnReport(`progress report not taken, training goes on: ${error.message}`);
      return { ...(this.#lastAllocation ?? {}) };
    }
  }

  /**
   * A report made: the older ones it covers (the same epoch or an earlier one) are not sent again, the
   * one kept included, and a retry of one waiting for its turn is not made.
   */
  #supersede(body) {
    for (const older of this.#liveReports) if (notAfter(older, body)) this.#liveReports.delete(older);
    if (this.#unsentReport !== null && !this.#liveReports.has(this.#unsentReport)) this.#unsentReport = null;
    this.#liveReports.add(body);
  }

  /**
   * Sends a report (each attempt in the report line, and only while no newer report covers it) and
   * returns boa's answer, checked to be boa's. Rejects with Superseded when a newer one came first.
   */
  async #sendReport(body) {
    const send = () =>
      this.#request('POST', `/v1/jobs/${this.jobId}/progress`, body, (attempt) =>
        this.#inReportLine(() => {
          if (!this.#liveReports.has(body)) throw new Superseded('a newer report was made');
          return attempt();
        }),
      );
    let answer;
    try {
      answer = await send();
    } catch (error) {
      if (!(body.sequence !== undefined && sequenceUnknown(error))) throw error;
      // A boa from before the sequence refuses the whole report for it: sent without, as it was then,
      // and so are the reports after it.
      this.#sendSequence = false;
      delete body.sequence;
      answer = await send();
    }
    return this.#observe(this.#reportAnswer(answer));
  }

  /** Runs `work` (one attempt of a report) once the attempts before it are answered or given up. */
  #inReportLine(work) {
    const turn = this.#reportLine.then(work, work);
    this.#reportLine = turn.catch(() => undefined);
    return turn;
  }

  /**
   * boa answers a report with the job's allocation: a 200 short of its fields is not boa's answer but a
   * proxy's (a captive portal, an ingress gone wrong) and the report was not taken.
   */
  #reportAnswer(answer) {
    const integer = (name) => Number.isInteger(answer[name]);
    if (
      answer.jobId !== this.jobId ||
      !['width', 'generation', 'statEpoch'].every(integer) ||
      typeof answer.state !== 'string' ||
      !Array.isArray(answer.nodes)
    )
      throw new NotBoaAnswer(
        `unexpected answer from ${this.url} (is BOA_URL a boa service?): ${JSON.stringify(answer).slice(0, 80)}`,
      );
    return answer;
  }

  /**
   * The background poll's turn when a report boa did not take is kept: it is sent again (its answer is
   * the allocation, as a poll's). Resolves to whether there was one and boa answered it.
   */
  async #sendUnsent() {
    const unsent = this.#unsentReport;
    if (unsent === null) return false;
    try {
      await this.#sendReport(unsent);
    } catch (error) {
      if (error instanceof Superseded) return false; // a newer report replaced it meanwhile
      // Kept, for the next poll; a refused job is the poll's to handle.
      if (!(error instanceof BoaHTTPError) || passing(error) || [401, 403, 404].includes(error.status))
        throw error;
      // boa refused this report (an epoch overtaken meanwhile, the job ended): not sent again.
      this.#forgetUnsent(unsent);
      return false;
    }
    this.#forgetUnsent(unsent);
    return true;
  }

  /** A kept report boa took or refused: not sent again. */
  #forgetUnsent(unsent) {
    this.#liveReports.delete(unsent);
    if (this.#unsentReport === unsent) this.#unsentReport = null;
  }

  #warnReport(message) {
    // A training loop reports every epoch: one line a while, not one per report.
    const now = performance.now();
    if (this.#reportWarnedAt === null || now - this.#reportWarnedAt >= this.warnEverySeconds * 1000) {
      this.#reportWarnedAt = now;
      console.warn(`boa job ${this.jobId}: ${message}`);
    }
  }

  /** Tells boa the job finished; boa frees its GPUs. Repeating it is harmless. */
  async complete() {
    const job = await this.#request('POST', `/v1/jobs/${this.jobId}/complete`);
    // The job is done: no report is wanted any more, nor a retry of one.
    this.#unsentReport = null;
    this.#liveReports.clear();
    this.#setStop(`job ${job?.state ?? 'done'}`, 'ended');
    return job;
  }

  /**
   * Polls until boa gives the job GPUs (width > 0) and returns that allocation. A self-launched job
   * calls it before training and again after stopping for a new generation: it adopts the allocation's
   * generation and clears that stop. A SIGTERM or an ended job is never cleared: with one of those in
   * place it rejects with a BoaError rather than hand back GPUs. It rejects too if the job ends
   * meanwhile, SIGTERM comes while the width is 0, the timeout passes, or boa refuses the poll (a 4xx);
   * boa unreachable or failing (5xx, 429) is waited out like width 0, with a console.warn at the first
   * such poll and then at most every warnEverySeconds.
   */
  async waitForWidth(timeoutSeconds) {
    this.#heeded = true;
    // The monotonic clock, as Python's time.monotonic, here and for the warnings' spacing: a wall clock
    // stepped back (NTP, a VM resumed) held this wait, and silenced the warnings, as long as the step.
    // "abc" made the deadline NaN, which no time passes: a wait for ever where a timeout was asked for.
    if (timeoutSeconds !== undefined && !(typeof timeoutSeconds === 'number' && timeoutSeconds >= 0))
      throw new BoaConfigError(`timeoutSeconds must be a number from 0, got ${shown(timeoutSeconds)}`);
    const deadline = timeoutSeconds === undefined ? Infinity : performance.now() + timeoutSeconds * 1000;
    for (;;) {
      let alloc = {};
      let trouble = null;
      try {
        alloc = await this.allocation();
      } catch (error) {
        // A restart of boa outlasts one poll's retries; the job has not ended for it.
        if (!passing(error)) throw error;
        trouble = error;
      }
      this.#warnTrouble(trouble);
      if (FINISHED_STATES.includes(alloc.state)) throw new BoaError(`job ${this.jobId} is ${alloc.state}`);
      if (alloc.width > 0) {
        // Never cleared, as an ended job: GPUs handed back now would be stopped on at once.
        if (this.#sigterm) throw new BoaError(`job ${this.jobId} stopped for good (SIGTERM)`);
        if (this.generation === null || this.#stopKind === 'generation') {
          this.generation = alloc.generation;
          this.#adoptedAllocation = alloc;
          this.#stopReason = this.#stopKind = null;
        } else if (this.#stopKind !== null) {
          // Handing back GPUs while shouldStop() stays true would send a caller that resumes on them
          // straight back to stopping, in a loop.
          throw new BoaError(`job ${this.jobId} stopped for good (${this.#stopReason})`);
        }
        return alloc;
      }
      const wait = Math.min(this.pollSeconds * 1000, deadline - performance.now());
      if (wait <= 0) {
        const last = trouble === null ? '' : ` (last poll: ${trouble.message})`;
        throw new BoaError(`job ${this.jobId} got no GPUs within ${timeoutSeconds} s${last}`);
      }
      await this.#pause(wait);
      // The listener replaced Node's default exit: without this a waiting job would ignore SIGTERM.
      if (this.#sigterm) throw new BoaError('SIGTERM while waiting for GPUs');
      if (this.#closed) throw new BoaError('client closed while waiting for GPUs');
    }
  }

  #warnTrouble(trouble) {
    // A wrong BOA_URL fails like a boa restarting, which is waited out: without a word the job would
    // seem to wait for GPUs. So: at once, then at most every warnEverySeconds while it lasts.
    if (trouble === null || this.#closed) {
      this.#warnedAt = null;
      return;
    }
    const now = performance.now();
    if (this.#warnedAt !== null && now - this.#warnedAt < this.warnEverySeconds * 1000) return;
    this.#warnedAt = now;
    console.warn(
      trouble instanceof BoaUnavailable
        ? `boa job ${this.jobId}: boa at ${this.url} is not reachable (${trouble.reason}); retrying while ` +
            'waiting for GPUs (is BOA_URL right?)'
        : `boa job ${this.jobId}: boa at ${this.url} answered ${trouble.status} ${trouble.code}: ` +
            `${trouble.detail}; retrying while waiting for GPUs`,
    );
  }

  /** Sleeps up to `ms`; SIGTERM or close() ends it at once (and its timer, which would hold the process). */
  #pause(ms) {
    if (this.#sigterm || this.#closed) return Promise.resolve();
    return new Promise((done) => {
      const wake = () => {
        clearTimeout(timer);
        this.#wakers.delete(wake);
        done();
      };
      const timer = setTimeout(wake, ms);
      this.#wakers.add(wake);
    });
  }

  #wake() {
    for (const wake of this.#wakers) wake();
  }

  // ---- knowing when to stop ----

  /** True once the job must checkpoint and exit: SIGTERM, a new generation, or the job ended. */
  shouldStop() {
    this.#heeded = true;
    return this.#sigterm || this.#stopReason !== null;
  }
  /** Why shouldStop() is true: "SIGTERM" (which outranks the others), a new generation, the job ended. */
  get stopReason() {
    this.#heeded = true;
    return this.#sigterm ? 'SIGTERM' : this.#stopReason;
  }
  get lastAllocation() {
    return this.#lastAllocation;
  }
  /** The last error of the background poll (it polls on after any but a self-launched job's refusal). */
  get pollError() {
    return this.#pollError;
  }

  /** Polls the allocation every pollSeconds (a timer that does not keep the process alive). */
  startPolling() {
    if (this.#pollTimer !== null || this.#closed) return this;
    const poll = async () => {
      try {
        if (!(await this.#sendUnsent())) await this.allocation();
        this.#pollError = null;
      } catch (error) {
        // Anything but a BoaError is a bug: say so, once per kind, not every pollSeconds. Then poll on.
        if (!(error instanceof BoaError) && this.#pollError?.constructor !== error?.constructor)
          console.warn(`boa job ${this.jobId}: the allocation poll failed; polling on:`, error);
        this.#pollError = error;
        // The job is gone or the token is not its own: a self-launched job stops. Under the executor it
        // does not: rank 0 exiting 0 there means done, and a refusal may be a stranger at BOA_URL for a
        // while (a restart, a port reused); boa sends SIGTERM to the replicas it no longer wants.
        if (!this.#runByExecutor && error instanceof BoaHTTPError && [401, 403, 404].includes(error.status)) {
          this.#setStop(`boa refused the allocation poll: ${error.message}`, 'ended');
          return;
        }
      }
      if (!this.#closed) this.#pollTimer = setTimeout(poll, this.pollSeconds * 1000).unref();
    };
    this.#pollTimer = setTimeout(poll, this.pollSeconds * 1000).unref();
    return this;
  }

  /** Stops the poll and gives SIGTERM back to whoever else listens (or Node's default). */
  close() {
    this.#closed = true;
    clearTimeout(this.#pollTimer);
    this.#wake();
    if (this.#onSigterm) process.off('SIGTERM', this.#onSigterm);
    this.#onSigterm = null;
  }

  #observe(alloc) {
    // Any JSON object from something other than boa (a proxy, another service at BOA_URL) read as "new
    // generation undefined": the replica stopped and exited 0, which the executor takes for the job done.
    if (!Number.isInteger(alloc.generation) || typeof alloc.state !== 'string')
      throw new BoaError(
        `unexpected answer from ${this.url} (is BOA_URL a boa service?): ${JSON.stringify(alloc).slice(0, 80)}`,
      );
    this.#lastAllocation = alloc;
    if (FINISHED_STATES.includes(alloc.state)) this.#setStop(`job ${alloc.state}`, 'ended');
    else if (this.generation !== null && alloc.generation !== this.generation)
      this.#setStop(`new generation ${alloc.generation} (this replica is ${this.generation})`, 'generation');
    return alloc;
  }

  #setStop(reason, kind) {
    if (this.#stopReason !== null) return;
    this.#stopReason = reason;
    this.#stopKind = kind;
  }

  // ---- HTTP with bounded retries ----

  /**
   * `inTurn`, given, runs each attempt (a function returning its answer): the reports' line, which may
   * also refuse it (then its error is the request's).
   */
  async #request(method, path, body, inTurn = (attempt) => attempt()) {
    const headers = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let delay = this.backoffSeconds;
    for (let attempt = 0; ; attempt++) {
      const last = attempt === this.retries;
      // Jitter, so the replicas of a job do not retry in step.
      let wait = delay * (0.5 + Math.random() / 2);
      let response;
      let text;
      let moved = false;
      // After a SIGTERM the grace period is for the checkpoint: a cancel check against a boa that does
      // not answer took 10 s of torchrun's 30 (found in review).
      const timeout = this.#sigterm
        ? Math.min(this.timeoutSeconds, this.sigtermTimeoutSeconds)
        : this.timeoutSeconds;
      try {
        // The timeout starts with the attempt, not while it waits for its turn.
        [response, text] = await inTurn(async () => {
          const answered = await fetchFollowing(this.url + path, {
            method,
            headers,
            body: body === undefined ? undefined : JSON.stringify(body),
            signal: AbortSignal.timeout(timeout * 1000),
          });
          return [answered, await answered.text()];
        });
      } catch (error) {
        if (error instanceof BoaError) throw error; // a redirect not followed: asking again changes nothing
        // Refused, reset, timed out, a name not found: the service may be restarting, maybe elsewhere.
        response = undefined;
        moved = this.#followMovedUrl();
        if (last && !moved) {
          const reason = unreachableReason(error, timeout);
          throw new BoaUnavailable(
            `boa at ${this.url} not reachable after ${this.retries + 1} attempts: ${reason}`,
            reason,
          );
        }
      }
      if (response) {
        if (response.ok) return jsonObject(text, this.url);
        // 4xx is the request's fault and will not change by asking again; 429 asks to wait.
        if ((response.status < 500 && response.status !== 429) || last) throw httpError(response, text);
        const retryAfter = Number(response.headers.get('retry-after'));
        if (retryAfter > 0) wait = Math.min(retryAfter, 60);
      }
      if (this.#closed) throw new BoaUnavailable('client closed while retrying');
      // After a SIGTERM the job has a grace period to checkpoint in: no retry, no wait (found in review:
      // a report retried against an unreachable boa held a SIGTERM up for 10-70 s).
      await this.#pause(wait * 1000);
      if (this.#closed) throw new BoaUnavailable('client closed while retrying');
      if (this.#sigterm) throw new BoaUnavailable('SIGTERM: not retried, the job is to stop', 'SIGTERM');
      // At a new address the retries start over. Only a change of the file's does that: no loop.
      if (moved) [attempt, delay] = [-1, this.backoffSeconds];
      else delay = Math.min(delay * 2, this.maxBackoffSeconds);
    }
  }

  /**
   * Under boa's local executor, a boa restarted at another address (--port, --public-url) writes it to
   * BOA_URL_FILE, since this process's BOA_URL cannot change: read when boa does not answer, and taken
   * if it is another valid URL. Returns whether the client moved to it.
   */
  #followMovedUrl() {
    if (this.#urlFile === null) return false;
    let text;
    try {
      text = readFileSync(this.#urlFile, 'utf8').trim();
    } catch {
      return false; // its folder gone (the replica is being forgotten): stay where we are
    }
    const url = text.replace(/\/+$/, '');
    // Not one a BOA_URL would be refused for: requests there would fail for ever, as at a wrong BOA_URL.
    if (url === '' || url === this.url || urlProblem(text) !== null) return false;
    console.warn(
      `boa job ${this.jobId}: boa moved from ${this.url} to ${url} (BOA_URL_FILE); reporting there`,
    );
    this.url = url;
    return true;
  }
}

/** How many redirects one request follows, as urllib (the Python client's) does. */
const MAX_REDIRECTS = 10;

/**
 * fetch, but a POST (a report, complete) is re-sent with its body on a 307 or 308 to the same host
 * and refused (a BoaHTTPError naming where it pointed) on any other redirect: fetch turned a 301/302
 * POST into a GET, whose 404 report() took for the job refused. A GET follows as fetch does (the
 * token only to the same origin). The same rules as the Python client's.
 */
async function fetchFollowing(url, init) {
  if (init.method === 'GET') return fetch(url, init);
  for (let hops = 0; ; hops++) {
    const response = await fetch(url, { ...init, redirect: 'manual' });
    const location = response.headers.get('location');
    if (![301, 302, 303, 307, 308].includes(response.status) || location === null) return response;
    await response.body?.cancel();
    const to = new URL(location, url);
    const from = new URL(url);
    const sameHost = to.host === from.host && !(from.protocol === 'https:' && to.protocol !== 'https:');
    if ([307, 308].includes(response.status) && sameHost && hops < MAX_REDIRECTS) {
      url = to.href;
      continue;
    }
    const why =
      hops >= MAX_REDIRECTS
        ? `more than ${MAX_REDIRECTS} redirects`
        : [307, 308].includes(response.status)
          ? "it points to another host (or from https to http), and the job's token goes only to BOA_URL's"
          : `a ${response.status} turns the ${init.method} into a GET, which boa does not answer`;
    throw new BoaHTTPError(
      response.status,
      'redirect_not_followed',
      `${init.method} ${url} was redirected to ${to.href}; not followed: ${why}. Set BOA_URL to the address boa is at`,
    );
  }
}

/** Whether the newer report covers the older one: the same epoch or a later one. */
function notAfter(older, newer) {
  return !(older.statEpoch > newer.statEpoch);
}

/** Whether boa refused a report's `sequence` as a field it does not know (one from before it). */
function sequenceUnknown(error) {
  return error instanceof BoaHTTPError && error.status === 400 && error.field === 'sequence';
}

/** Whether a report's send failed for now (boa unreachable or failing, or a proxy answering for it). */
function failedSend(error) {
  return passing(error) || error instanceof NotBoaAnswer;
}

/** Whether a request's error is boa (or the way to it) failing for now: what retries are for. */
function passing(error) {
  return (
    error instanceof BoaUnavailable ||
    (error instanceof BoaHTTPError && (error.status >= 500 || error.status === 429))
  );
}

/** Why a request got no answer, short: ECONNREFUSED, ENOTFOUND, timed out after 10 s. */
function unreachableReason(error, timeoutSeconds) {
  if (error?.name === 'TimeoutError') return `timed out after ${timeoutSeconds} s`;
  // fetch's TypeError('fetch failed') carries the socket's error as its cause.
  return error?.cause?.code ?? error?.cause?.message ?? error?.message ?? String(error);
}

/** Every answer of boa's is a JSON object; anything else (a stranger's HTML page) is a BoaError. */
function jsonObject(text, url) {
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    answer = undefined;
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer))
    throw new NotBoaAnswer(
      `unexpected answer from ${url} (is BOA_URL a boa service?): ${JSON.stringify(text.slice(0, 80))}`,
    );
  return answer;
}

function httpError(response, text) {
  let detail;
  try {
    detail = JSON.parse(text)?.error;
  } catch {
    // not JSON: keep the status text
  }
  // boa answers {"error": {"code", "message", "field"}}; a proxy or another framework at BOA_URL may
  // answer {"error": "Not Found"}, whose string is the message.
  const payload = detail !== null && typeof detail === 'object' && !Array.isArray(detail) ? detail : {};
  return new BoaHTTPError(
    response.status,
    payload.code ?? 'http_error',
    payload.message ?? (typeof detail === 'string' ? detail : response.statusText),
    payload.field,
  );
}
