import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { startService } from '../service/harness.ts';

export interface TestJob {
  id: number;
  token: string;
  /** The plan's width per statistical epoch. */
  widths: number[];
  width: number;
  generation: number;
  /** The first statistical epoch whose planned width differs from epoch 0's (reporting it rescales). */
  rescaleEpoch: number;
}

/**
 * A real boa service (in-process, virtual clock, emulated node pool) on a real HTTP port, for job
 * clients in other processes. Besides the API it serves a few `/__test/*` routes that only this
 * harness has: the clients' tests use them to move the service's clock (ticks), make a running job,
 * count the requests a client sent, make the next requests fail with a 5xx or get a proxy's page, and
 * hold a request before boa sees it (a proxy sitting on it) until the test releases it.
 */
/** A fresh service: budget 12 with cifar10 at 8 an hour, where some jobs' plans widen as their
 * epochs pass (see test/service/scheduling.test.ts), which gives the tests a real rescale to trigger. */
async function freshService() {
  const s = await startService({
    config: {
      priorRates: { cifar10: 8, bert: 1 },
      local: { maxNodes: 16, bootSeconds: 90, releaseSeconds: 30 },
      // The clients' tests trigger the plan's own rescale at a known epoch; the idle fill would widen a
      // lone job to its node's 4 GPUs at once and keep them (test/service/idle-fill*.test.ts test it).
      idleFill: false,
    },
  });
  const budget = await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 12 });
  if (budget.status !== 200) throw new Error(`budget not set: ${JSON.stringify(budget.body)}`);
  await s.service.planner.idle();
  return s;
}

export async function startServedBoa() {
  // Each test job gets a service of its own (same URL), so one test's jobs never move another's plan.
  let s = await freshService();
  const requests = new Map<string, number>();
  let failNext: { count: number; status: number; retryAfter?: number } = { count: 0, status: 503 };
  /** The next requests' answer in place of boa's: a proxy's page (a captive portal answering 200). */
  let answerNext = { count: 0, status: 200, contentType: 'text/html', body: '' };
  /** A request held (a proxy that sits on it) until released: "METHOD path" to hold, and its release. */
  let hold: { key: string; held: boolean; release: () => void; released: Promise<void> } | null = null;
  /** Whether boa answered the last request held (released and passed on, or its client gone). */
  let heldAnswered = false;
  // Tests drive the service one at a time; this queue keeps their ticks and API calls from interleaving.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return run;
  };

  const fetch = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    if (url.pathname.startsWith('/__test/')) {
      return serial(() => control(url, req)).catch((error: Error) =>
        Response.json({ error: error.stack ?? error.message }, { status: 500 }),
      );
    }
    const key = `${req.method} ${url.pathname}`;
    requests.set(key, (requests.get(key) ?? 0) + 1);
    if (failNext.count > 0) {
      failNext.count -= 1;
      const headers: Record<string, string> =
        failNext.retryAfter === undefined ? {} : { 'retry-after': String(failNext.retryAfter) };
      return Response.json(
        { error: { code: 'injected', message: 'injected by the test' } },
        { status: failNext.status, headers },
      );
    }
    if (answerNext.count > 0) {
      answerNext.count -= 1;
      return new Response(answerNext.body, {
        status: answerNext.status,
        headers: { 'content-type': answerNext.contentType },
      });
    }
    if (hold?.key === key && !hold.held) {
      hold.held = true;
      heldAnswered = false;
      // A proxy has the whole request before it sits on it: its client may give up meanwhile.
      const body = ['GET', 'HEAD'].includes(req.method) ? undefined : await req.text();
      const whole = new Request(req.url, { method: req.method, headers: req.headers, body });
      await hold.released;
      try {
        return await s.app.fetch(whole);
      } finally {
        heldAnswered = true;
      }
    }
    return s.app.fetch(req);
  };

  /** Holds the next request `key` ("METHOD path") before boa sees it, until release() (or the next hold). */
  const holdNext = (key: string) => {
    hold?.release();
    let release = () => {};
    const released = new Promise<void>((done) => (release = done));
    hold = { key, held: false, release, released };
  };
  /** Whether the request holdNext named has come and is being held. */
  const holding = () => hold?.held === true;
  const release = () => {
    hold?.release();
    hold = null;
  };

  /** The sequence numbers boa took from each sender of the job's reports, by sender. */
  const reportSequences = (jobId: number): Record<string, number> => {
    const rows = s.db.$client
      .prepare('SELECT sender, number FROM report_sequences WHERE job_id = ?')
      .all(jobId) as { sender: string; number: number }[];
    return Object.fromEntries(rows.map((r) => [r.sender, r.number]));
  };

  /** Requests to the API since the last call, by "METHOD path". */
  const takeRequests = (): Record<string, number> => {
    const counts = Object.fromEntries(requests);
    requests.clear();
    return counts;
  };

  const control = async (url: URL, req: Request): Promise<Response> => {
    const body =
      req.method === 'POST' ? ((await req.json().catch(() => ({}))) as Record<string, unknown>) : {};
    switch (url.pathname) {
      case '/__test/job':
        return Response.json(await makeJob({ running: body.running !== false }));
      case '/__test/ticks':
        await s.ticks(Number(body.count ?? 1));
        return Response.json({ at: s.clock.now() });
      case '/__test/requests':
        return Response.json(takeRequests());
      case '/__test/answer-next':
        answerNext = {
          count: Number(body.count ?? 1),
          status: Number(body.status ?? 200),
          contentType: String(body.contentType ?? 'text/html'),
          body: String(body.body ?? ''),
        };
        return Response.json(answerNext);
      case '/__test/hold-next':
        holdNext(String(body.key));
        return Response.json({ key: body.key });
      case '/__test/holding':
        return Response.json({ holding: holding() });
      case '/__test/release':
        release();
        return Response.json({});
      case '/__test/held-answered':
        return Response.json({ answered: heldAnswered });
      case '/__test/report-sequences':
        return Response.json(reportSequences(Number(url.searchParams.get('job'))));
      case '/__test/fail-next':
        failNext = {
          count: Number(body.count ?? 1),
          status: Number(body.status ?? 503),
          ...(body.retryAfter === undefined ? {} : { retryAfter: Number(body.retryAfter) }),
        };
        return Response.json(failNext);
      default:
        return Response.json({ error: `no test route ${url.pathname}` }, { status: 404 });
    }
  };

  /**
   * A cifar10 job whose plan widens later, on a fresh service, running (width > 0) unless `running` is
   * false (then it is just registered, waiting). Of another class (`className`): its first job, as
   * planned (it may never widen).
   */
  const makeJob = async ({
    running,
    className = 'cifar10',
  }: {
    running: boolean;
    className?: string;
  }): Promise<TestJob> => {
    await s.close();
    s = await freshService();
    let chosen: { id: number; token: string; job: { widths: number[] } } | undefined;
    const others: number[] = [];
    for (let i = 0; i < 16 && !chosen; i++) {
      const made = (await s.request('POST', '/v1/jobs', { class: className })).body;
      const widths: number[] = made.job.widths ?? [];
      if (className !== 'cifar10' || widths.some((w) => w !== widths[0])) chosen = made;
      else others.push(made.id);
    }
    for (const id of others) s.service.finishJob(id, 'cancelled');
    if (!chosen) throw new Error('no cifar10 job with a widening plan at budget 12');
    for (let i = 0; running && i < 10 && s.service.job(chosen.id).width === 0; i++) await s.ticks(1);
    const job = s.service.job(chosen.id);
    if (running && job.width === 0) throw new Error(`job ${job.id} got no GPUs after 10 ticks`);
    const widths = chosen.job.widths;
    return {
      id: job.id,
      token: chosen.token,
      widths,
      width: job.width,
      generation: job.generation,
      rescaleEpoch: widths.findIndex((w) => w !== widths[0]),
    };
  };

  const server = await new Promise<ReturnType<typeof serve>>((ready) => {
    const srv = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => ready(srv));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = async () => {
    release();
    await new Promise((closed) => server.close(closed));
    await s.close();
  };
  return {
    service: () => s,
    /** A copy of the job as the service holds it now. */
    job: (id: number) => ({ ...s.service.job(id) }),
    url,
    makeJob: (running = true, className?: string) =>
      serial(() => makeJob({ running, ...(className ? { className } : {}) })),
    ticks: (count: number) => serial(() => s.ticks(count)),
    takeRequests,
    /** The next `count` API requests answer `status` (a 5xx or 429 the clients must retry). */
    failNext: (count: number, status = 503, retryAfter?: number) =>
      (failNext = { count, status, ...(retryAfter === undefined ? {} : { retryAfter }) }),
    /** The next `count` API requests get this answer in place of boa's (a proxy's page, say). */
    answerNext: (count: number, status: number, contentType: string, body: string) =>
      (answerNext = { count, status, contentType, body }),
    holdNext,
    holding,
    release,
    heldAnswered: () => heldAnswered,
    reportSequences,
    close,
  };
}

export type ServedBoa = Awaited<ReturnType<typeof startServedBoa>>;
