/**
 * The ledger across crashes: a run killed at random points (in-memory state dropped, the service
 * re-opened from the same SQLite file, as after kill -9) stores the allocated integral the jobs really
 * had (within one tick), the paid integral of the nodes really listed (within one tick per node: the
 * ledger sees a node come and go at ticks), and allocation samples that never overlap.
 *
 * Against the ground truth of the same run rather than an uninterrupted one: the service's decisions
 * are not bit-for-bit repeatable run to run (placement and the node reconciler keep state in memory),
 * so two runs differ in what they allocate, not in how the ledger counts it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { LocalNodePool } from '../../src/cloud/local/local-node-pool.ts';
import { ManualClock, startService } from './harness.ts';

const TICK_SECONDS = 60;
const STEPS = 24;
const HALF_TICK = 25;
const GPUS_PER_NODE = 4;
const RELEASE_SECONDS = 30;
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
      calculatorMinutes: 1440,
      priorRates: { cifar10: 6, bert: 1 },
      local: { maxNodes: 16, bootSeconds: 60, releaseSeconds: RELEASE_SECONDS },
      budget: 30,
    },
  });
}

/**
 * Simulated kill -9 between steps: only committed transactions remain. close() writes nothing (it
 * waits for work in flight, of which there is none between steps, and releases the data-dir lock, as
 * the kernel does when the process dies); the in-memory state is dropped with the instance.
 */
async function crash(s: Service): Promise<void> {
  await s.close();
}

/** Records every node the local pool has had, with its launch and release times. */
function observePool(s: Service, seen: Map<string, { launchedAt: number; releasedAt?: number }>): void {
  const snapshot = (s.pool as LocalNodePool).toJSON();
  for (const node of snapshot.nodes)
    seen.set(node.id, { launchedAt: node.launchedAt, releasedAt: node.releasedAt });
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
  const poolNodes = new Map<string, { launchedAt: number; releasedAt?: number }>();
  for (const [i, step] of steps.entries()) {
    for (let r = 0; r < step.register; r++)
      s.service.registerJob(r % 3 === 2 ? 'bert' : 'cifar10', undefined);
    await s.scheduler.tick();
    await s.service.planner.idle();
    await s.scheduler.settle();
    observePool(s, poolNodes);
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
    observePool(s, poolNodes);
    truthGpuMs += allocatedNow(s) * (TICK_SECONDS - HALF_TICK) * 1000;
    clock.advance(TICK_SECONDS - HALF_TICK);
    if (kills.has(i)) {
      await crash(s);
      s = await boot(dataDir, clock);
    }
  }
  await s.scheduler.tick();
  const end = clock.now();
  // What the pool really ran: each node from its launch until it is gone (release + release time).
  let paidTruthGpuMs = 0;
  for (const node of poolNodes.values()) {
    const gone =
      node.releasedAt === undefined ? end : Math.min(end, node.releasedAt + RELEASE_SECONDS * 1000);
    paidTruthGpuMs += GPUS_PER_NODE * (gone - node.launchedAt);
  }
  const nodesSeen = poolNodes.size;
  const totals = s.repo.ledger.ledgerTotals(start, end);
  const samples = s.db.$client
    .prepare('select from_ms as "from", to_ms as "to" from allocation_samples order by from_ms, to_ms')
    .all() as Array<{ from: number; to: number }>;
  await s.close();
  return { ...totals, truthGpuMs, paidTruthGpuMs, nodesSeen, peakGpus, samples };
}

const stepArb = fc.record({
  register: fc.nat({ max: 2 }),
  complete: fc.boolean(),
  progress: fc.boolean(),
});

describe('the ledger across crashes', () => {
  it('stores the allocated and paid integrals the run really had, samples never overlapping', async () => {
    let killPoints = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: STEPS, maxLength: STEPS }),
        fc.uniqueArray(fc.nat({ max: STEPS - 2 }), { minLength: 1, maxLength: 3 }),
        async (steps, kills) => {
          killPoints += kills.length;
          const r = await run(steps, new Set(kills));
          const oneTick = Math.max(1, r.peakGpus) * TICK_SECONDS * 1000;
          expect(Math.abs(r.allocatedGpuMs - r.truthGpuMs)).toBeLessThanOrEqual(oneTick);
          // The ledger sees a node gone at the first tick it is not listed: up to a tick late, never early.
          const perNode = r.nodesSeen * GPUS_PER_NODE * TICK_SECONDS * 1000;
          expect(r.paidGpuMs).toBeGreaterThanOrEqual(r.paidTruthGpuMs);
          expect(r.paidGpuMs - r.paidTruthGpuMs).toBeLessThanOrEqual(perNode);
          for (let k = 1; k < r.samples.length; k++) {
            expect(r.samples[k]!.from).toBeGreaterThanOrEqual(r.samples[k - 1]!.to);
          }
        },
      ),
      { numRuns: 50 },
    );
    expect(killPoints).toBeGreaterThanOrEqual(50);
  }, 300_000);
});
