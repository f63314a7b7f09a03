import { describe, expect, it } from 'vitest';
import { hasPython, runPythonTests, until } from './processes.ts';
import { mutedWarnings, quickClient } from './node-clients.ts';
import { servedBoaForFile } from '../helpers/served-boa-for-file.ts';
import type { TestJob } from './served.ts';

// Each report carries its place among its client's (`sequence`): an attempt the client gave up on
// (timed out), forwarded by a proxy after the newer report, changes nothing at boa. Before, its lower
// workDoneSeconds of the same epoch was taken and boa's view went back until the next report. The
// Python client's cases are in clients/python/tests/test_report_sequence.py.

const { boa, clients } = servedBoaForFile();

const client = (job: TestJob, options: Record<string, unknown> = {}) =>
  quickClient(boa, clients, job, options);
const progress = (job: TestJob) => `POST /v1/jobs/${job.id}/progress`;

describe('Node job client: report sequence', () => {
  it(
    'an attempt that timed out and reaches boa after the newer report changes nothing',
    { timeout: 60_000 },
    async () => {
      mutedWarnings();
      const job = await boa.makeJob();
      const c = client(job, { timeoutSeconds: 3 }); // its retry's answer may be slow on a loaded machine
      // A proxy sits on the first attempt: the client gives up on it and its retry is taken.
      boa.holdNext(progress(job));
      expect((await c.report(1, 10)).statEpoch).toBe(1);
      expect(boa.holding()).toBe(true);
      expect((await c.report(1, 50)).statEpoch).toBe(1);
      expect(boa.job(job.id).workDoneSeconds).toBe(50);
      boa.release(); // the proxy forwards it at last
      expect(await until(() => boa.heldAnswered(), 20)).toBe(true);
      expect(boa.job(job.id).workDoneSeconds).toBe(50);
    },
  );

  it('each client is a sender of its own, numbering its reports from 1', { timeout: 60_000 }, async () => {
    const job = await boa.makeJob();
    const a = client(job);
    const b = client(job);
    await a.report(1, 10);
    await a.report(1, 20);
    await b.report(1, 30);
    expect(Object.values(boa.reportSequences(job.id)).sort()).toEqual([1, 2]);
  });

  it(
    'a boa from before the sequence (which refuses it) gets the report without it',
    { timeout: 60_000 },
    async () => {
      const warn = mutedWarnings();
      const job = await boa.makeJob();
      const c = client(job);
      const refusal = {
        error: {
          code: 'invalid',
          message: 'unknown field "sequence"; the fields are statEpoch, workDoneSeconds, generation',
          field: 'sequence',
        },
      };
      boa.answerNext(1, 400, 'application/json', JSON.stringify(refusal));
      expect((await c.report(1, 10)).statEpoch).toBe(1);
      await c.report(1, 20);
      expect(boa.job(job.id).workDoneSeconds).toBe(20);
      expect(boa.reportSequences(job.id)).toEqual({}); // neither sent one again
      expect(warn).not.toHaveBeenCalled();
    },
  );
});

describe.skipIf(!hasPython)('Python job client: the same cases', () => {
  it('passes test_report_sequence.py against a real boa service', { timeout: 180_000 }, async () => {
    const result = await runPythonTests('test_report_sequence', boa.url);
    expect(result.status).toBe(0);
    expect(result.out).toMatch(/Ran 3 tests/);
    expect(result.out).not.toMatch(/skipped/);
  });
});
