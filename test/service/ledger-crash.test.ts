/**
 * The ledger across crashes: a run killed at random points (in-memory state dropped, the service
 * re-opened from the same SQLite file, as after kill -9) stores the same allocated and paid integrals
 * as the same run uninterrupted, and its allocation samples never overlap.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, startService } from './harness.ts';

const TICK_SECONDS = 60;
const STEPS = 30;
const HALF_TICK = 25;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Step {
  /** Jobs registered before this step's tick. */
  readonly register: number;
  /** The oldest running job completes (after the tick: the double-count case). */
  readonly complete: boolean;
  /** The oldest running job reports its next statistical epoch. */
  readonly progress: boolean;
}

type Service = Awaited<ReturnType<typeof startService>>;

async function boot(dataDir: string, clock: ManualClock): Promise<Service> {
  return startService({
    dataDir,
    clock,
    config: {
      tickSeconds: TICK_SECONDS,
      // One plan for the whole run: a restart must not change decisions, only the ledger is tested.
      calculatorMinutes: 10_000,
      priorRates: { cifar10: 6, bert: 1 },
      local: { maxNodes: 16, bootSeconds: 60, releaseSeconds: 30 },
      budget: 30,
    },
  });
}

/** Simulated kill -9: nothing is flushed or closed gracefully; only committed transactions remain. */
function crash(s: Service): void {
  s.db.$client.close();
}

function allocatedNow(s: Service): number {
  return [...s.service.state.jobs.values()].reduce((n, j) => n + j.allocation.length, 0);
}

function oldestRunning(s: Service) {
  return [...s.service.state.jobs.values()].find((j) => j.state === 'running');
}

/** Runs the scenario, crashing after the steps in `kills`; returns the stored ledger and the truth. */
async function run(steps: readonly Step[], kills: ReadonlySet<number>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-ledger-'));
  dirs.push(dataDir);
  const clock = new ManualClock();
  const start = clock.now();
  let s = await boot(dataDir, clock);
  await s.service.planner.idle();
  let truthGpuMs = 0;
  let peakGpus = 0;
  for (const [i, step] of steps.entries()) {
    for (let r = 0; r < step.register; r++)
      s.service.registerJob(r % 3 === 2 ? 'bert' : 'cifar10', undefined);
    await s.scheduler.tick();
    await s.service.planner.idle();
    await s.scheduler.settle();
    // Reports and completions arrive between ticks, as they do from real jobs.
    truthGpuMs += allocatedNow(s) * HALF_TICK * 1000;
    peakGpus = Math.max(peakGpus, allocatedNow(s));
    clock.advance(HALF_TICK);
    const runningJob = oldestRunning(s);
    if (step.progress && runningJob) {
      const epochs = s.service.state.classes.get(runningJob.className)?.profile.epochs.length ?? 1;
      if (runningJob.statEpoch + 1 < epochs)
        s.service.reportProgress(runningJob.id, runningJob.statEpoch + 1);
    }
    if (step.complete && runningJob) s.service.finishJob(runningJob.id, 'done');
    truthGpuMs += allocatedNow(s) * (TICK_SECONDS - HALF_TICK) * 1000;
    clock.advance(TICK_SECONDS - HALF_TICK);
    if (kills.has(i)) {
      crash(s);
      s = await boot(dataDir, clock);
    }
  }
  await s.scheduler.tick();
  const end = clock.now();
  const totals = s.repo.ledgerTotals(start, end);
  const samples = s.db.$client
    .prepare('select from_ms as "from", to_ms as "to" from allocation_samples order by from_ms, to_ms')
    .all() as Array<{ from: number; to: number }>;
  await s.close();
  return { ...totals, truthGpuMs, peakGpus, samples };
}

const stepArb = fc.record({
  register: fc.nat({ max: 2 }),
  complete: fc.boolean(),
  progress: fc.boolean(),
});

describe('the ledger across crashes', () => {
  it('keeps allocated and paid integrals equal to an uninterrupted run, samples never overlapping', async () => {
    let killPoints = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: STEPS, maxLength: STEPS }),
        fc.uniqueArray(fc.nat({ max: STEPS - 2 }), { minLength: 1, maxLength: 3 }),
        async (steps, kills) => {
          killPoints += kills.length;
          const reference = await run(steps, new Set());
          const crashed = await run(steps, new Set(kills));
          const oneTick = Math.max(1, reference.peakGpus) * TICK_SECONDS * 1000;
          // The uninterrupted ledger is the truth; the crashed one matches it.
          expect(Math.abs(reference.allocatedGpuMs - reference.truthGpuMs)).toBeLessThanOrEqual(oneTick);
          expect(Math.abs(crashed.allocatedGpuMs - reference.allocatedGpuMs)).toBeLessThanOrEqual(oneTick);
          expect(Math.abs(crashed.paidGpuMs - reference.paidGpuMs)).toBeLessThanOrEqual(oneTick);
          for (let k = 1; k < crashed.samples.length; k++) {
            expect(crashed.samples[k]!.from).toBeGreaterThanOrEqual(crashed.samples[k - 1]!.to);
          }
        },
      ),
      { numRuns: 50 },
    );
    expect(killPoints).toBeGreaterThanOrEqual(50);
  }, 300_000);
});
