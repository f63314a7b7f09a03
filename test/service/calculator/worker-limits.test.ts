/**
 * The worker thread the service computes plans in (calculator/computer.ts), with its real entry and
 * with a stand-in that misbehaves. A computation that runs out of memory must end its worker alone:
 * unbounded, the worker's heap could grow past the container's limit and take the whole service down.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerPlanComputer } from '../../../src/service/calculator/computer.ts';
import {
  checkBudget,
  computePlan,
  frontierOf,
  type PlanInputs,
} from '../../../src/service/calculator/compute.ts';
import { DEFAULT_PROFILES } from '../../../src/service/boot.ts';

const FIXTURE = new URL('../../fixtures/plan-worker.mjs', import.meta.url);

const computers: WorkerPlanComputer[] = [];
afterEach(async () => {
  for (const c of computers.splice(0)) await c.close();
});

function computer(options: ConstructorParameters<typeof WorkerPlanComputer>[0]) {
  const c = new WorkerPlanComputer(options);
  computers.push(c);
  return c;
}

/** Inputs the stand-in reads: its solver says how it behaves, its budget is echoed back. */
const standIn = (solver: string, budget = 40) => ({ solver, budget }) as unknown as PlanInputs;

describe('the plan worker', () => {
  it('ends a computation that outgrows its heap as out of memory; the next request gets an answer', async () => {
    // The stand-in holds 256 MB; with 64 MB it runs out.
    const c = computer({ entry: FIXTURE, maxHeapMb: 64, timeoutMs: 60_000 });
    await expect(c.compute(standIn('hog'))).rejects.toThrow(
      "plan computation ran out of memory (the worker's heap is at most 64 MB)",
    );
    await expect(c.compute(standIn('ok', 41))).resolves.toEqual({ budget: 41 });
  }, 60_000);

  it('computes with its real entry, within the default heap, the plan the calculator computes inline', async () => {
    const profiles = JSON.parse(readFileSync(DEFAULT_PROFILES, 'utf8'));
    const inputs: PlanInputs = {
      classes: profiles.classes,
      ratesPerHour: { cifar10: 8, bert: 1 },
      budget: 20,
      planningBudget: 20,
      solver: 'exact',
      gpusPerNode: 4,
      maxWidth: 16,
    };
    const { solveMs: _inWorker, ...answered } = await computer({}).compute(inputs);
    const { solveMs: _inline, ...inline } = computePlan(inputs);
    expect(answered).toEqual(inline);
  }, 120_000);

  it("computes the load's minimum and the frontier with its real entry, as the calculator does inline", async () => {
    const profiles = JSON.parse(readFileSync(DEFAULT_PROFILES, 'utf8'));
    const problem = {
      classes: profiles.classes,
      ratesPerHour: { cifar10: 8, bert: 1 },
      gpusPerNode: 4,
      maxWidth: 16,
    };
    const c = computer({});
    expect(await c.minimum(problem)).toBe(checkBudget(problem, 0, false));
    expect(await c.frontier(problem)).toEqual(frontierOf(problem));
    // The same classes are not sent again: the worker's own copy answers for the new rates.
    const busier = { ...problem, ratesPerHour: { cifar10: 16, bert: 2 } };
    expect(await c.minimum(busier)).toBe(checkBudget(busier, 0, false));
    const fewer = { ...busier, classes: profiles.classes.slice(1) };
    expect(await c.minimum(fewer)).toBe(checkBudget(fewer, 0, false));
  }, 120_000);

  it("fails a computation the calculator refuses with the calculator's own stack, for the log", async () => {
    const inputs = {
      classes: [],
      ratesPerHour: {},
      budget: 20,
      planningBudget: 20,
      solver: 'exact',
      gpusPerNode: 4,
    };
    const failure = await computer({})
      .compute(inputs as PlanInputs)
      .then(
        () => undefined,
        (error: Error) => error,
      );
    expect(failure?.message).toMatch(/^no classes to plan/);
    // Where it was thrown, in the worker: not the message port's handler on the service's thread.
    expect(failure?.stack).toMatch(/\n\s+at .*core\/instance\.ts/);
  }, 120_000);
});
