/*
 * Following a job's rank 0 log as `boa jobs logs -f` does: its last 200 lines and what it writes,
 * then each next generation from its start; a stream cut off is asked again from where it got to, a
 * service restarting is waited for (up to 5 minutes), and between runs the job is asked after; every
 * wait ends when the follow is stopped. It works through `f` (made by showLog in log-panel.js): the
 * token, the job's id, the abort signal, and where the lines, the status and the title go.
 */
/* global fetch, setTimeout, clearTimeout, URLSearchParams, TextDecoder, AbortController, AbortSignal */
/* global describeJob, startingLine -- job-state.js */
/* exported followJob -- used by log-panel.js */
'use strict';

/** How often a followed job is asked after between its runs, as `boa jobs logs -f` does. */
const FOLLOW_POLL_MS = 2000;
/**
 * How long a follow keeps asking a service that does not answer (restarting, say): as long as
 * `boa jobs logs -f` does (src/cli/transient.ts): a pod rescheduled takes more than a minute, and a
 * follow that gave up after one left the operator to find the job's id again (found in review).
 */
const UNREACHABLE_MS = 5 * 60_000;
/** The most lines a request gives: a later generation's log is read from its start, up to this. */
const WHOLE_LOG = 10_000;
const FINAL_STATES = new Set(['done', 'cancelled', 'failed', 'lost']);
/** How long a request of a follow waits for its answer to begin before it is asked again. */
const ANSWER_MS = 30_000;

/**
 * Where a followed log cut off (the connection broke, boa restarted) goes on, from the answer that
 * broke off and the bytes of it received: `query` replaces the cut request's position (tail, cursor).
 * `exact`: from where it got to (the answer's cursor and skip plus the bytes), nothing lost or shown
 * twice; else (a service from before cursors) from its newest line.
 */
function resumeQuery(headers, bytes) {
  const cursor = headers.get('boa-log-cursor');
  if (cursor === null) return { exact: false, query: { tail: '1' } };
  return { exact: true, query: { cursor, skip: String(Number(headers.get('boa-log-skip') ?? 0) + bytes) } };
}

/** The bytes at the end of `bytes` that begin a UTF-8 character without finishing it (as the CLI's). */
function unfinishedCharBytes(bytes) {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back];
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

/**
 * A followed log's keepalives (src/core/log-keepalive.ts): asked for with the request header, they come
 * as NUL `k` after each interval without a line, and the log's NULs as NUL NUL. Taken out piece by
 * piece (a NUL and what it escapes may come apart); the log's bytes are what is counted and shown.
 */
const KEEPALIVE_HEADER = 'boa-log-keepalive';
/** Intervals without a byte after which a follow takes its connection as dropped without a word. */
const KEEPALIVES_MISSED = 3;

function keepaliveReader() {
  let escaping = false;
  return (piece) => {
    if (!escaping && !piece.includes(0)) return piece;
    const out = [];
    for (const byte of piece) {
      if (escaping) {
        escaping = false;
        if (byte === 0) out.push(0);
      } else if (byte === 0) escaping = true;
      else out.push(byte);
    }
    return Uint8Array.from(out);
  };
}

/** The body's next piece, or a failure once nothing has come for `silentMs` (the read cancelled). */
function readWithin(reader, silentMs) {
  if (silentMs === undefined) return reader.read();
  let timer;
  const silence = new Promise((_, fail) => {
    timer = setTimeout(() => {
      fail(new Error(`nothing came for ${silentMs / 1000} s`));
      reader.cancel().catch(() => undefined);
    }, silentMs);
  });
  return Promise.race([reader.read(), silence]).finally(() => clearTimeout(timer));
}

/** A generation from its start (the cursor every executor reads as a log's beginning). */
const FROM_START = { tail: String(WHOLE_LOG), cursor: 'start' };

function logPath(id, generation, position) {
  const query = new URLSearchParams({ rank: '0', ...position, follow: 'true' });
  if (generation !== undefined) query.set('generation', String(generation));
  return `/v1/jobs/${id}/logs?${query}`;
}

/** Waits `ms`, or rejects as soon as the follow is stopped, its timer cleared: Close leaves none behind. */
function pause(ms, signal) {
  return new Promise((wake, stopped) => {
    if (signal.aborted) return stopped(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      stopped(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      wake();
    }, ms);
    signal.addEventListener('abort', abort, { once: true });
  });
}

/**
 * One request of a follow, asked again every poll while boa does not answer or is starting (restarted),
 * for up to a minute; its answer, whatever its status.
 */
async function ask(f, path, headers = {}) {
  let failingSince;
  for (;;) {
    let problem;
    // A request that gets no answer is asked again: sent on a connection dropped without a word, it
    // waited for ever (found in review). The limit ends with the answer's start: a log's body is
    // bounded by its keepalives instead (readWithin).
    const unanswered = new AbortController();
    const timer = setTimeout(
      () => unanswered.abort(new Error(`no answer in ${ANSWER_MS / 1000} s`)),
      ANSWER_MS,
    );
    try {
      const res = await fetch(path, {
        headers: { ...headers, authorization: `Bearer ${f.token}` },
        signal: AbortSignal.any([f.signal, unanswered.signal]),
      });
      clearTimeout(timer);
      if (res.status !== 503 || (await refusal(res.clone())).code !== 'starting') return res;
      problem = 'boa is starting';
    } catch (error) {
      clearTimeout(timer);
      if (f.signal.aborted) throw error;
      problem = `boa did not answer (${error.message})`;
    }
    failingSince ??= Date.now();
    if (Date.now() - failingSince > UNREACHABLE_MS)
      throw new Error(`${problem} for 5 minutes; the job may still run: its id follows it again`);
    f.status(`${problem}; trying again`);
    await pause(FOLLOW_POLL_MS, f.signal);
  }
}

/** boa's error of an answer that is not what was asked for, or its status. */
async function refusal(res) {
  const body = await res.json().catch(() => null);
  return {
    code: body?.error?.code ?? '',
    message: body?.error?.message ?? `${res.status} ${res.statusText}`,
  };
}

async function readJob(f) {
  const res = await ask(f, `/v1/jobs/${f.id}`);
  if (!res.ok) throw new Error((await refusal(res)).message);
  return res.json();
}

/**
 * Shows one generation's log (the newest one kept, when `generation` is undefined) as it is written,
 * until that run ends. Its generation, or undefined when no log is kept (not started yet, or gone).
 * `opened` is told the generation when its log begins. A stream cut off is asked again from where it
 * broke off (resumeQuery).
 */
async function streamLog(f, generation, position, opened) {
  let asked = { generation, position };
  let shown;
  for (;;) {
    const res = await ask(f, logPath(f.id, asked.generation, asked.position), { [KEEPALIVE_HEADER]: 'true' });
    if (!res.ok) {
      const error = await refusal(res);
      // None kept (yet); a job that launches itself never has one: said, not waited for.
      if (error.code === 'no_log' && !/launches itself/.test(error.message)) return shown;
      throw new Error(error.message);
    }
    if (shown === undefined) {
      shown = Number(res.headers.get('boa-generation'));
      opened(shown);
    }
    f.status(
      res.headers.get('boa-log-gap') === 'true'
        ? `following generation ${shown}: where the log had got to is no longer kept (rotated away while it was cut off); lines between are missing`
        : `following generation ${shown}: lines appear as the job writes them`,
    );
    let bytes = 0;
    // The last bytes that came: a cut inside a character is asked again from its start.
    let last = new Uint8Array(0);
    const decoder = new TextDecoder();
    // Keepalives: a service from before them sends none, and its answer is read as it was.
    const keepaliveSeconds = Number(res.headers.get(KEEPALIVE_HEADER));
    const logBytes = keepaliveSeconds > 0 ? keepaliveReader() : (piece) => piece;
    const silentMs =
      keepaliveSeconds > 0 ? Math.round(keepaliveSeconds * KEEPALIVES_MISSED * 1000) : undefined;
    try {
      const reader = res.body.getReader();
      for (;;) {
        const { done, value: received } = await readWithin(reader, silentMs);
        if (done) break;
        const value = logBytes(received);
        bytes += value.byteLength;
        last = new Uint8Array([...last, ...value.subarray(-3)]).subarray(-3);
        f.write(decoder.decode(value, { stream: true }));
      }
      f.write(decoder.decode());
      return shown;
    } catch (error) {
      if (f.signal.aborted) throw error;
      const resume = resumeQuery(res.headers, bytes - unfinishedCharBytes(last));
      f.status(
        `the log broke off (${error.message}); following it again ${resume.exact ? 'from where it was' : 'from its newest line (lines written meanwhile may be missing)'}`,
      );
      asked = { generation: shown, position: resume.query };
      await pause(FOLLOW_POLL_MS, f.signal);
    }
  }
}

/** Asks after the job until it ends or runs a generation newer than `after`, saying what it waits for. */
async function nextGeneration(f, after) {
  for (;;) {
    const job = await readJob(f);
    if (FINAL_STATES.has(job.state)) return job;
    if (job.state === 'running' && job.generation > after && job.width > 0) return job;
    f.status(describeJob(job));
    await pause(FOLLOW_POLL_MS, f.signal);
  }
}

/**
 * Rank 0's output of a job as `boa jobs logs -f` shows it: its last 200 lines and what it writes; then
 * each next generation (a restart, a rescale) from its start, after a separator line, saying between
 * runs what it waits for; until the job ends, said as the CLI says it.
 */
async function followJob(f) {
  let restartsSeen = (await readJob(f)).restarts;
  let shownAny = false;
  const opened = (generation) => {
    if (shownAny) f.separator(generation);
    shownAny = true;
    f.title(generation);
  };
  // Nothing kept yet (it waits, or its replica is not up): every generation from its present one on.
  let after = (await streamLog(f, undefined, { tail: '200' }, opened)) ?? (await readJob(f)).generation - 1;
  for (;;) {
    const job = await nextGeneration(f, after);
    const final = FINAL_STATES.has(job.state);
    // Generations that ran and ended between two looks (a run shorter than a poll): shown whole.
    for (let g = Math.max(1, after + 1); g < job.generation + (final ? 1 : 0); g++) {
      await streamLog(f, g, FROM_START, opened);
      after = g;
    }
    if (final) return f.status(describeJob(job));
    const shown = await streamLog(f, job.generation, FROM_START, opened);
    if (shown !== undefined) {
      after = shown;
      restartsSeen = job.restarts;
      continue;
    }
    f.status(startingLine(job, restartsSeen));
    await pause(FOLLOW_POLL_MS, f.signal);
  }
}
