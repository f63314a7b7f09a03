/**
 * A progress report's sequence (src/service/report-sequence.ts): a report older than one boa already
 * took from the same sender (an attempt the client gave up on, forwarded late by a proxy) changes
 * nothing, across a restart too; other senders' reports, and reports without a sequence, as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, startService } from './harness.ts';
import { failOnce } from '../helpers/fail-once.ts';
import { SENDERS_KEPT } from '../../src/store/report-sequences.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await boa?.close();
  boa = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A service (on a data directory, when given) with job `a` of cifar10 running. */
async function runningJob(dataDir?: string, clock = new ManualClock()) {
  boa = await startService({
    dataDir,
    clock,
    config: { tickSeconds: 60, local: { maxNodes: 8, bootSeconds: 0, releaseSeconds: 0 }, budget: 40 },
  });
  await boa.service.planner.idle();
  const { job, token } = boa.service.registerJob('cifar10', 'a');
  await boa.ticks(3);
  expect(job.state).toBe('running');
  return { job, token };
}

/** Reports work done in statistical epoch 1, with `sequence` when given; boa's answer. */
function report(
  jobId: number,
  token: string,
  workDoneSeconds: number,
  sequence?: { sender: string; number: number },
) {
  return boa!.request(
    'POST',
    `/v1/jobs/${jobId}/progress`,
    { statEpoch: 1, workDoneSeconds, ...(sequence ? { sequence } : {}) },
    token,
  );
}

const storedWork = (jobId: number) => boa!.service.deps.repo.getJob(jobId)!.workDoneSeconds;

describe('report sequence', () => {
  it('a late report numbered below one taken from its sender leaves the work as it is, answered as a poll', async () => {
    const { job, token } = await runningJob();
    expect((await report(job.id, token, 100, { sender: 'a1', number: 2 })).status).toBe(200);
    const lastReportAt = job.lastReportAt;
    boa!.clock.advance(30);
    // The attempt numbered 1 the client gave up on, forwarded late by a proxy.
    const late = await report(job.id, token, 50, { sender: 'a1', number: 1 });
    expect(late.status).toBe(200);
    const poll = await boa!.request('GET', `/v1/jobs/${job.id}/allocation`, undefined, token);
    expect(late.body).toEqual(poll.body);
    expect(job.workDoneSeconds).toBe(100);
    expect(storedWork(job.id)).toBe(100);
    expect(job.lastReportAt).toBe(lastReportAt);
    // The same report sent again (a retry of one taken) changes nothing either.
    expect((await report(job.id, token, 60, { sender: 'a1', number: 2 })).status).toBe(200);
    expect(storedWork(job.id)).toBe(100);
    // A newer one from the sender is taken, lower work included (a resume from a checkpoint).
    expect((await report(job.id, token, 40, { sender: 'a1', number: 3 })).status).toBe(200);
    expect([job.workDoneSeconds, storedWork(job.id)]).toEqual([40, 40]);
  });

  it("a retry of a report taken is answered as a poll, though another replica's has passed its epoch", async () => {
    const { job, token } = await runningJob();
    const at = (statEpoch: number, sender: string, number: number) =>
      boa!.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch, sequence: { sender, number } }, token);
    expect((await at(2, 'rank0', 5)).status).toBe(200);
    expect((await at(3, 'rank1', 1)).status).toBe(200);
    // rank0's retry of its report taken: not refused (its client would warn the report was not taken).
    const retry = await at(2, 'rank0', 5);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ jobId: job.id, statEpoch: 3 });
    // One of its never taken, older than the epoch, is refused as before.
    expect((await at(2, 'rank0', 6)).body.error).toMatchObject({ code: 'epoch_regressed' });
    expect(job.statEpoch).toBe(3);
  });

  it("each sender's sequence is its own: another replica's report neither shields nor is shielded", async () => {
    const { job, token } = await runningJob();
    expect((await report(job.id, token, 100, { sender: 'rank0', number: 7 })).status).toBe(200);
    // Another replica (or a restarted process, a new sender) counting from 1 is taken, lower or not.
    expect((await report(job.id, token, 90, { sender: 'rank1', number: 1 })).status).toBe(200);
    expect(storedWork(job.id)).toBe(90);
    expect((await report(job.id, token, 95, { sender: 'rank1', number: 2 })).status).toBe(200);
    // rank0's attempt numbered 6, forwarded late, still changes nothing.
    expect((await report(job.id, token, 10, { sender: 'rank0', number: 6 })).status).toBe(200);
    expect(storedWork(job.id)).toBe(95);
  });

  it('without a sequence a lower report is taken, as before', async () => {
    const { job, token } = await runningJob();
    expect((await report(job.id, token, 100, { sender: 'a1', number: 2 })).status).toBe(200);
    expect((await report(job.id, token, 50)).status).toBe(200);
    expect([job.workDoneSeconds, storedWork(job.id)]).toEqual([50, 50]);
  });

  it('a late report after a restart still changes nothing: the sequence taken is stored', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-report-sequence-'));
    dirs.push(dataDir);
    const clock = new ManualClock();
    const { job, token } = await runningJob(dataDir, clock);
    expect((await report(job.id, token, 100, { sender: 'a1', number: 2 })).status).toBe(200);
    await boa!.close();
    boa = await startService({ dataDir, clock });
    expect((await report(job.id, token, 50, { sender: 'a1', number: 1 })).status).toBe(200);
    expect(storedWork(job.id)).toBe(100);
    expect(boa.service.state.jobs.get(job.id)!.workDoneSeconds).toBe(100);
  });

  it('a report whose transaction rolls back leaves no sequence: its retry is taken', async () => {
    const { job, token } = await runningJob();
    failOnce(boa!.service.deps.repo.reportSequences, 'record');
    expect((await report(job.id, token, 100, { sender: 'a1', number: 2 })).status).toBe(500);
    expect(storedWork(job.id)).toBe(0);
    expect(boa!.service.deps.repo.reportSequences.taken(job.id, 'a1')).toBeUndefined();
    expect((await report(job.id, token, 100, { sender: 'a1', number: 2 })).status).toBe(200);
    expect([job.workDoneSeconds, storedWork(job.id)]).toEqual([100, 100]);
  });

  it(`keeps a job's ${SENDERS_KEPT} senders heard last: the one heard least recently is forgotten`, async () => {
    const { job, token } = await runningJob();
    for (let i = 0; i <= SENDERS_KEPT; i++) {
      expect((await report(job.id, token, 100 + i, { sender: `s${i}`, number: 5 })).status).toBe(200);
      boa!.clock.advance(1);
    }
    const sequences = boa!.service.deps.repo.reportSequences;
    expect(sequences.taken(job.id, 's0')).toBeUndefined();
    expect(sequences.taken(job.id, 's1')).toBe(5);
    expect(sequences.taken(job.id, `s${SENDERS_KEPT}`)).toBe(5);
    const rows = boa!.db.$client.prepare('SELECT count(*) FROM report_sequences').pluck().get();
    expect(rows).toBe(SENDERS_KEPT);
  });

  it("prunes an ended job's senders heard before the ledger's cut, never an active job's", async () => {
    const { job, token } = await runningJob();
    const other = boa!.service.registerJob('cifar10', 'b');
    expect((await report(job.id, token, 100, { sender: 'a1', number: 1 })).status).toBe(200);
    expect((await report(other.job.id, other.token, 100, { sender: 'b1', number: 1 })).status).toBe(200);
    boa!.service.finishJob(job.id, 'done');
    const repo = boa!.service.deps.repo;
    boa!.clock.advance(60);
    repo.pruneBefore(boa!.clock.now());
    expect(repo.reportSequences.taken(job.id, 'a1')).toBeUndefined();
    expect(repo.reportSequences.taken(other.job.id, 'b1')).toBe(1);
  });

  it.each([
    [{ sender: 'a1' }, 'sequence.number', 'sequence.number is missing (a number)'],
    [{ sender: 'a b', number: 1 }, 'sequence.sender', 'senders are 1-64 letters, digits, . _ : or -'],
    [{ sender: 'a1', number: -1 }, 'sequence.number', 'sequence.number must be'],
    [{ sender: 'a1', number: 1.5 }, 'sequence.number', 'sequence.number must be'],
    [{ sender: 'a1', number: 1, at: 2 }, 'sequence.at', 'unknown field "at"; the fields are sender, number'],
    ['a1:1', 'sequence', 'sequence must be an object'],
  ])('refuses a sequence %j, naming what is wrong', async (sequence, field, message) => {
    const { job, token } = await runningJob();
    const res = await boa!.request('POST', `/v1/jobs/${job.id}/progress`, { statEpoch: 1, sequence }, token);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid', field });
    expect(res.body.error.message).toContain(message);
    expect(job.statEpoch).toBe(0);
  });
});
