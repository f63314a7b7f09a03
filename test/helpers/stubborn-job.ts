import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { until } from './until.ts';

/** What this needs of a started service (test/service/harness.ts's, or the CLI's over it). */
interface Ticking {
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  ticks(count: number): Promise<void>;
}

/**
 * Submits a bert job whose replica ignores SIGTERM (the sleep it becomes inherits that), so it runs on
 * for its whole grace once boa stops it, and ticks until that replica runs: its id and its pid (written
 * to `pidFile`).
 */
export async function runStubbornJob(
  s: Ticking,
  pidFile: string,
  name?: string,
): Promise<{ id: number; pid: number }> {
  const made = await s.request('POST', '/v1/jobs', {
    class: 'bert',
    ...(name === undefined ? {} : { name }),
    workload: {
      command: [
        'sh',
        '-c',
        `trap '' TERM; echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; exec sleep 600`,
      ],
    },
  });
  expect(made.status).toBe(201);
  for (let i = 0; i < 5 && !existsSync(pidFile); i++) {
    await s.ticks(1);
    await until('the stubborn replica running', () => existsSync(pidFile), 5000).catch(() => undefined);
  }
  expect(existsSync(pidFile)).toBe(true);
  return { id: made.body.id as number, pid: Number(readFileSync(pidFile, 'utf8')) };
}
