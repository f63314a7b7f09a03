import { describe, expect, it } from 'vitest';
import { hasPython, runPythonTests, until } from './processes.ts';
import { mutedWarnings, quickClient } from './node-clients.ts';
import { servedBoaForFile } from '../helpers/served-boa-for-file.ts';
import type { TestJob } from './served.ts';

// A progress report sent again (a kept one, or a retry) must never land after a newer report and put
// boa's view back: boa refuses an older epoch (409 epoch_regressed) but takes a lower workDoneSeconds
// of the same epoch. And a 200 that is not boa's answer (a captive portal's page) is no report taken.
// Each case is held for both clients; the Python client's are in clients/python/tests/test_resend_order.py.

const { boa, clients } = servedBoaForFile();

const client = (job: TestJob, options: Record<string, unknown> = {}) =>
  quickClient(boa, clients, job, options);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const progress = (job: TestJob) => `POST /v1/jobs/${job.id}/progress`;
const posts = (job: TestJob) => boa.takeRequests()[progress(job)] ?? 0;

/** Whether a progress report of `job` reaches boa's door within `seconds` (counted, held or not). */
async function postArrives(job: TestJob, seconds: number) {
  let seen = 0;
  return until(() => (seen += posts(job)) > 0, seconds);
}

describe('Node job client: a report sent again never lands after a newer one', () => {
  it('a kept report whose resend a proxy holds up goes to boa before the newer report, not after', async () => {
    // Before: the newer report went at once and was taken, the resend landed after it, and boa's
    // workDoneSeconds went back from 50 to 10 until the next report.
    mutedWarnings();
    const job = await boa.makeJob();
    const c = client(job);
    boa.failNext(2, 503); // the report and its one retry: kept
    await c.report(1, 10);
    boa.holdNext(progress(job));
    c.startPolling();
    expect(await until(() => boa.holding())).toBe(true); // the resend, held on its way
    posts(job);
    const newer = c.report(1, 50);
    // It waits for the attempt on the wire to be answered: none reaches boa meanwhile.
    expect(await postArrives(job, 1.5)).toBe(false);
    boa.release();
    expect((await newer).statEpoch).toBe(1);
    await sleep(500); // a resend still to come would land here
    expect(boa.job(job.id).workDoneSeconds).toBe(50);
    expect(c.lastAllocation?.statEpoch).toBe(1);
  });

  it("a report's retry is not sent once a newer report of the same epoch was taken", async () => {
    // Before: the retry went out after its backoff and boa's workDoneSeconds went back to 10; had it
    // failed instead, it was kept and sent again by the poll.
    mutedWarnings();
    const job = await boa.makeJob();
    const c = client(job, { backoffSeconds: 2 }); // its retry waits 1 to 2 s
    boa.failNext(1, 503);
    const older = c.report(1, 10);
    expect(await postArrives(job, 20)).toBe(true); // answered 503: its retry waits
    expect((await c.report(1, 50)).statEpoch).toBe(1);
    expect(posts(job)).toBe(1); // that one
    await older;
    c.startPolling();
    await sleep(500);
    expect(posts(job)).toBe(0); // neither the retry nor a resend of it
    expect(boa.job(job.id).workDoneSeconds).toBe(50);
  });
});

describe("Node job client: a 200 that is not boa's answer to a report", () => {
  const pages: [string, string, string][] = [
    ['a captive portal', 'text/html', '<html><body>Sign in to the network</body></html>'],
    ['JSON of another service', 'application/json', '{"ok":true}'],
    ['JSON short of an allocation', 'application/json', '{"state":"running","generation":1}'],
  ];
  it.each(pages)('(%s) is a failed send: kept, sent again, warned once', async (_, contentType, body) => {
    // Before: the report was taken for lost ("not taken") and not kept, and boa never had it.
    const warn = mutedWarnings();
    const job = await boa.makeJob();
    const c = client(job);
    boa.answerNext(3, 200, contentType, body.replace('"generation":1', `"generation":${job.generation}`));
    expect(await c.report(1, 5)).toEqual(c.lastAllocation ?? {});
    expect(boa.job(job.id).statEpoch).toBe(0);
    c.startPolling(); // its first two sends meet the page again
    expect(await until(() => boa.job(job.id).statEpoch === 1)).toBe(true);
    expect(boa.job(job.id).workDoneSeconds).toBe(5);
    const lines = warn.mock.calls.map((call) => String(call[0]));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^boa job ${job.id}: progress report not taken, training goes on: unexpected answer from .* \\(is BOA_URL a boa service\\?\\)`,
      ),
    );
  });
});

describe.skipIf(!hasPython)('Python job client: the same cases', () => {
  it('passes test_resend_order.py against a real boa service', { timeout: 180_000 }, async () => {
    const result = await runPythonTests('test_resend_order', boa.url);
    expect(result.status).toBe(0);
    expect(result.out).toMatch(/Ran 3 tests/);
    expect(result.out).not.toMatch(/skipped/);
  });
});
