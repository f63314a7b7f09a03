import { afterEach, describe, expect, it } from 'vitest';
import { WorkerPlanComputer } from '../../src/service/calculator/computer.ts';
import type { PlanInputs } from '../../src/service/calculator/compute.ts';

const FIXTURE = new URL('../fixtures/plan-worker.mjs', import.meta.url);

/** Inputs the fixture reads: its solver says how it behaves, its budget is echoed back. */
const inputs = (solver: string, budget = 40) => ({ solver, budget }) as unknown as PlanInputs;

const computers: WorkerPlanComputer[] = [];
afterEach(async () => {
  for (const c of computers.splice(0)) await c.close();
});

function computer(timeoutMs = 60_000) {
  const c = new WorkerPlanComputer({ entry: FIXTURE, timeoutMs });
  computers.push(c);
  return c;
}

describe('WorkerPlanComputer', () => {
  it('fails the computation of a worker that exits, and answers the next request from a new worker', async () => {
    const c = computer();
    await expect(c.compute(inputs('die'))).rejects.toThrow('plan worker exited with code 3');
    await expect(c.compute(inputs('ok', 41))).resolves.toEqual({ budget: 41 });
  });

  it('fails every computation waiting on a worker that throws', async () => {
    const c = computer();
    const first = c.compute(inputs('throw'));
    const second = c.compute(inputs('ok', 42));
    await expect(first).rejects.toThrow('worker bug');
    await expect(second).rejects.toThrow('worker bug');
    await expect(c.compute(inputs('ok', 43))).resolves.toEqual({ budget: 43 });
  });

  it('ends a worker that does not answer within the timeout, and the next request gets an answer', async () => {
    const c = computer(2000);
    await expect(c.compute(inputs('hang'))).rejects.toThrow('plan computation took over 2 s');
    await expect(c.compute(inputs('ok', 44))).resolves.toEqual({ budget: 44 });
  });

  it('ends a computation no longer wanted with its worker, and the next request gets an answer', async () => {
    const c = computer();
    const unwanted = new AbortController();
    const hung = c.compute(inputs('hang'), unwanted.signal);
    unwanted.abort();
    await expect(hung).rejects.toThrow('plan computation no longer wanted: worker ended');
    await expect(c.compute(inputs('ok', 45))).resolves.toEqual({ budget: 45 });
  });

  it('sends the classes once while they are the same objects, again when one changes or the worker is new', async () => {
    const c = computer();
    const [a, b] = [{ name: 'a' }, { name: 'b' }];
    const sent = async (classes: object[]) =>
      (
        (await c.compute({ solver: 'classes', classes } as unknown as PlanInputs)) as unknown as {
          classesSent: boolean;
        }
      ).classesSent;
    expect(await sent([a, b])).toBe(true);
    expect(await sent([a, b])).toBe(false);
    expect(await sent([a, { name: 'b' }])).toBe(true);
    await expect(c.compute(inputs('die'))).rejects.toThrow('exited');
    expect(await sent([a, { name: 'b' }])).toBe(true);
  });

  it('refuses work once closed', async () => {
    const c = computer();
    await expect(c.compute(inputs('ok'))).resolves.toEqual({ budget: 40 });
    await c.close();
    await expect(c.compute(inputs('ok'))).rejects.toThrow('closed');
  });
});
