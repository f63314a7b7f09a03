/**
 * Jobs run as real local processes for the dashboard's log tests (a service from
 * test/cli/process-service.ts): one submitted with a node script, and ticks until it gets somewhere.
 */
import { expect } from 'vitest';
import type { startProcessService } from '../../cli/process-service.ts';

type Service = Awaited<ReturnType<typeof startProcessService>>['s'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A cifar10 job boa runs: node running `script`. Its id. */
export async function submitScript(s: Service, name: string, script: string): Promise<number> {
  const made = await s.request('POST', '/v1/jobs', {
    class: 'cifar10',
    name,
    workload: { command: [process.execPath, '-e', script] },
  });
  expect(made.status).toBe(201);
  return made.body.id as number;
}

/** Ticks the service (its clock a tick on each time) until `done` says so. */
export async function tickUntil(s: Service, done: () => boolean | Promise<boolean>, what: string) {
  for (let i = 0; i < 300; i++) {
    if (await done()) return;
    await s.ticks(1);
    await s.service.execution.settle();
    await sleep(50);
  }
  throw new Error(`never: ${what}`);
}
