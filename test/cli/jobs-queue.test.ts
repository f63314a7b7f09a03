/**
 * `boa jobs list --queue`: the jobs queued for the budget in the order they start, and each queued
 * job's place in line in the list's note (a list by submission read as the queue).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { describeJob } from '../../src/cli/commands/jobs-wait.ts';
import { startCliService } from './cli-harness.ts';
import { QUEUE_CONFIG, queueMixedLongJobs } from '../service/budget-queue-load.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('boa jobs list --queue', { timeout: 180_000 }, () => {
  it('lists the queue in the order it starts, each with its place in line', async () => {
    const s = await startCliService({ config: QUEUE_CONFIG });
    cleanups.push(s.close);
    await queueMixedLongJobs(s);
    const queue = (await s.request('GET', '/v1/jobs?order=queue')).body.jobs as Array<{ id: number }>;
    expect(queue.length).toBeGreaterThan(2);

    const listed = await s.boa(['jobs', 'list', '--queue']);
    expect(listed.stderr).toBe('');
    const lines = listed.stdout.trimEnd().split('\n').slice(1);
    expect(lines.map((line) => Number(line.trim().split(/\s+/)[0]))).toEqual(queue.map((j) => j.id));
    lines.forEach((line, i) => expect(line).toMatch(new RegExp(`queued for the budget, #${i + 1} in line$`)));
    // The list by submission says the same places.
    const all = (await s.boa(['jobs', 'list'])).stdout.split('\n');
    const first = all.find((line) => line.trim().startsWith(`${queue[0]!.id} `));
    expect(first).toMatch(/queued for the budget, #1 in line$/);

    // `boa jobs wait` says it of a job it waits for.
    const firstJob = (await s.request('GET', `/v1/jobs/${queue[0]!.id}`)).body;
    expect(describeJob(firstJob)).toBe(
      `job ${firstJob.id} (${firstJob.name}): queued for the budget, #1 in line`,
    );

    const two = await s.boa(['jobs', 'list', '--queue', '--limit', '2']);
    expect(two.stdout.trimEnd().split('\n')).toHaveLength(3);
    expect(two.stderr).toBe('the first 2 in the queue are shown; more: --limit N (up to 10000)\n');
  });

  it('refuses what the queue cannot be listed with, by name', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    const cases: Array<[string[], string]> = [
      [['--ended'], '--queue and --ended are two orders: give one of them'],
      [['--before', '3'], '--queue has no pages: give --limit N (up to 10000), not --before'],
      [['--state', 'waiting'], '--queue lists waiting jobs queued for the budget: give it without --state'],
    ];
    for (const [more, said] of cases) {
      const run = await s.boa(['jobs', 'list', '--queue', ...more]);
      expect(run.status).toBe(2);
      expect(run.stderr).toBe(`boa: ${said}\n`);
    }
  });
});
