/**
 * Each job's GPU-hours: its booked GPUs (lent ones left out) times the time it held them, kept in its row
 * through restarts and boa's downtime. The jobs' GPU-time adds up to the ledger's allocated GPU-time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gpuMsAt } from '../../src/service/gpu-time.ts';
import { jobFromRow } from '../../src/service/jobs.ts';
import { jobView } from '../../src/service/views.ts';
import type { WaitContext } from '../../src/service/waiting-for.ts';
import { ManualClock, startService } from './harness.ts';

/** No tick has run, no node is coming: the view's wait read before any tick. */
const NOT_TICKED: WaitContext = { lastTickAt: undefined, nodesComing: false, plannedClasses: new Set() };

const dirs: string[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-gpu-time-'));
  dirs.push(dir);
  return dir;
}

/** 10 s ticks, 4-GPU local nodes, the idle fill on; jobs never poll, so no lease runs out. */
async function boot(dataDir: string, clock: ManualClock, maxNodes: number) {
  const s = await startService({
    dataDir,
    clock,
    config: {
      priorRates: { deepspeech2: 2, cifar10: 2, bert: 1 },
      leaseSeconds: 86_400,
      local: { maxNodes, bootSeconds: 90, releaseSeconds: 30 },
      idleFill: true,
      tickSeconds: 10,
    },
  });
  cleanups.push(s.close);
  return s;
}

type Booted = Awaited<ReturnType<typeof boot>>;

/** Every job's GPU-ms at `at`, read from the store (what a restart would resume from). */
function storedJobsGpuMs(s: Booted, at: number): number {
  return [...storedGpuMsByClass(s, at).values()].reduce((sum, ms) => sum + ms, 0);
}

/** The same by job class, classes whose jobs booked nothing left out (as the ledger leaves them). */
function storedGpuMsByClass(s: Booted, at: number): Map<string, number> {
  const byClass = new Map<string, number>();
  for (const row of s.repo.listJobs(1000)) {
    const ms = gpuMsAt(jobFromRow(row), at) ?? Number.NaN;
    if (ms !== 0) byClass.set(row.className, (byClass.get(row.className) ?? 0) + ms);
  }
  return byClass;
}

describe("a job's GPU-hours", () => {
  it('books its plan width from its first placement to its end, the GPUs the idle fill lent left out', async () => {
    const clock = new ManualClock();
    const s = await boot(tempDir(), clock, 1);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 9 })).status).toBe(200);
    await s.service.planner.idle();
    const id = (await s.request('POST', '/v1/jobs', { class: 'deepspeech2' })).body.id as number;
    expect((await s.request('GET', `/v1/jobs/${id}`)).body.gpuHours).toBe(0);
    for (let i = 0; i < 20 && s.service.state.jobs.get(id)?.allocation.length !== 4; i++) await s.ticks(1);
    const running = (await s.request('GET', `/v1/jobs/${id}`)).body;
    // Runs on 4 GPUs, 3 of them lent: the budget books 1.
    expect(running).toMatchObject({ width: 4, lentGpus: 3 });
    expect(running.widths[running.statEpoch]).toBe(1);
    await s.ticks(30);

    const done = (await s.request('POST', `/v1/jobs/${id}/complete`)).body;
    const heldMs = Date.parse(done.finishedAt) - Date.parse(done.startedAt);
    expect(heldMs).toBeGreaterThan(300_000);
    expect(done.gpuHours).toBeCloseTo(heldMs / 3_600_000, 4);
    // In dollars at the node's price per GPU (the embedded default's g4dn.12xlarge: 4 GPUs).
    const { nodePricePerHour, gpusPerNode } = s.service.deps.config;
    expect(nodePricePerHour).toBeGreaterThan(0);
    expect(done.dollars).toBe(Number(((done.gpuHours * nodePricePerHour!) / gpusPerNode).toFixed(2)));
    // No price known: no dollar figure rather than another type's.
    const job = s.service.job(id);
    expect(jobView(job, NOT_TICKED, clock.now()).dollars).toBeNull();
    expect(jobView(job, NOT_TICKED, clock.now(), 2).dollars).toBe(Number((done.gpuHours * 2).toFixed(2)));
    // Ended: it books nothing more.
    await s.ticks(3);
    expect((await s.request('GET', `/v1/jobs/${id}`)).body.gpuHours).toBe(done.gpuHours);
    const ledger = s.repo.ledger.ledgerTotals(0, clock.now()).allocatedGpuMs;
    expect(storedJobsGpuMs(s, clock.now())).toBe(ledger);
  });

  it("adds up to the ledger's allocated GPU-time through rescales, budget cuts, ends and kill -9 restarts", async () => {
    const dataDir = tempDir();
    const clock = new ManualClock();
    let s = await boot(dataDir, clock, 4);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 24 })).status).toBe(200);
    await s.service.planner.idle();
    const ids: number[] = [];
    const submit = async (cls: string) =>
      ids.push((await s.request('POST', '/v1/jobs', { class: cls })).body.id as number);
    const agree = () => {
      // Right after a tick every job's interval and the ledger's samples end at the same instant.
      const at = s.repo.ledger.lastAllocationTo() as number;
      expect(storedJobsGpuMs(s, at)).toBe(s.repo.ledger.ledgerTotals(0, at).allocatedGpuMs);
      // And class by class: the ledger's split of the budget is the jobs' own.
      expect(s.repo.ledger.allocatedGpuMsByClass(0, at)).toEqual(storedGpuMsByClass(s, at));
    };

    for (const cls of ['deepspeech2', 'cifar10', 'bert', 'deepspeech2']) await submit(cls);
    await s.ticks(15);
    agree();
    // A cut narrows or queues the running jobs: their booked GPUs change mid-run.
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 6 })).status).toBe(200);
    await s.service.planner.idle();
    await s.ticks(8);
    agree();
    // Between ticks: the end closes the open interval itself, and the next one books without the job.
    clock.advance(4);
    await s.request('POST', `/v1/jobs/${ids[1]}/complete`);
    clock.advance(3);
    await submit('cifar10');
    await s.ticks(4);
    agree();

    // kill -9 (close writes nothing) and 47 s down: the jobs keep their GPUs, both sides book the gap.
    await s.close();
    clock.advance(47);
    s = await boot(dataDir, clock, 4);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 })).status).toBe(200);
    await s.service.planner.idle();
    await s.ticks(12);
    agree();
    await s.request('POST', `/v1/jobs/${ids[0]}/cancel`);
    await s.ticks(2);
    await s.close();
    clock.advance(13);
    s = await boot(dataDir, clock, 4);
    await s.ticks(6);
    agree();

    for (const id of ids) {
      const job = (await s.request('GET', `/v1/jobs/${id}`)).body;
      if (job.state === 'running' || job.state === 'waiting')
        await s.request('POST', `/v1/jobs/${id}/complete`);
    }
    await s.ticks(2);
    const end = clock.now();
    const ledger = s.repo.ledger.ledgerTotals(0, end).allocatedGpuMs;
    // Something ran on several GPUs for minutes: not a sum of zeros.
    expect(ledger).toBeGreaterThan(4 * 600_000);
    expect(storedJobsGpuMs(s, end)).toBe(ledger);
    const shown = (await s.request('GET', '/v1/jobs')).body.jobs as Array<{ gpuHours: number }>;
    const shownSum = shown.reduce((sum, j) => sum + j.gpuHours, 0);
    expect(shownSum).toBeCloseTo(ledger / 3_600_000, 3);
    // Three boots and 49 ticks: 18 s on CI's 2 cores, 80 s once under other runs' load.
  }, 180_000);
});

describe("the budget window's GPU-hours by class", () => {
  it('GET /v1/budget splits the allocated average by class, the open interval in, older samples as no class', async () => {
    const dataDir = tempDir();
    const clock = new ManualClock();
    let s = await boot(dataDir, clock, 4);
    expect((await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 24 })).status).toBe(200);
    await s.service.planner.idle();
    for (const cls of ['deepspeech2', 'cifar10', 'bert', 'cifar10'])
      expect((await s.request('POST', '/v1/jobs', { class: cls })).status).toBe(201);
    await s.ticks(20);
    // Half a tick after the last: the interval still open counts, by class as in the total.
    clock.advance(5);
    type Row = { className: string | null; gpuHours: number; gpuHoursPerHour: number; share: number };
    const read = async () => (await s.request('GET', '/v1/budget')).body.window;
    const window = await read();
    const rows = window.allocatedByClass as Row[];
    const stored = storedGpuMsByClass(s, clock.now());
    expect(new Set(rows.map((r) => r.className))).toEqual(new Set(stored.keys()));
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows)
      expect(row.gpuHours).toBeCloseTo(stored.get(row.className as string)! / 3_600_000, 3);
    const sum = (key: 'gpuHoursPerHour' | 'share') => rows.reduce((total, r) => total + r[key], 0);
    expect(sum('gpuHoursPerHour')).toBeCloseTo(window.allocatedGpuHoursPerHour, 3);
    expect(sum('share')).toBeCloseTo(1, 3);
    // Most first.
    expect(rows.map((r) => r.gpuHours)).toEqual([...rows.map((r) => r.gpuHours)].sort((a, b) => b - a));

    // A sample written before migration 0014 has no classes: its GPUs are one row of no class.
    await s.close();
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(dataDir, 'boa.sqlite'));
    const oldest = db
      .prepare(
        'select id, gpus * (to_ms - from_ms) as gpuMs from allocation_samples where gpus > 0 order by id limit 1',
      )
      .get() as { id: number; gpuMs: number };
    db.prepare('update allocation_samples set gpus_by_class = null where id = ?').run(oldest.id);
    db.close();
    s = await boot(dataDir, clock, 4);
    const after = await read();
    const unknown = (after.allocatedByClass as Row[]).find((r) => r.className === null);
    expect(unknown?.gpuHours).toBeCloseTo(oldest.gpuMs / 3_600_000, 4);
    const afterSum = (after.allocatedByClass as Row[]).reduce((total, r) => total + r.gpuHoursPerHour, 0);
    expect(afterSum).toBeCloseTo(after.allocatedGpuHoursPerHour, 3);
  });
});
