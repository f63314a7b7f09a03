/**
 * A rank asked of an ended job that has no log of it: the job holds no GPUs to say how many replicas it
 * ran, so the ranks whose logs its generation keeps are named (an executor whose generation 4 kept
 * ranks 0 to 2).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { jobLogs } from '../../src/service/job-logs.ts';
import type { Executor, ReplicaLogQuery } from '../../src/service/ports.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function endedJobWithRanks(kept: number, failing = false) {
  const asked: ReplicaLogQuery[] = [];
  const executor: Executor = {
    kind: 'local',
    reconcile: async () => [],
    close: async () => {},
    logs: async (query) => {
      asked.push(query);
      // Rank 1 alone: the rank asked reads as missing, the count after rank 0 fails.
      if (failing && query.rank === 1) throw new Error('the log store is away');
      const generation = query.generation ?? 4;
      return generation === 4 && query.rank < kept ? { generation, text: 'a line\n' } : undefined;
    },
  };
  const s = await startService({ executor });
  cleanups.push(s.close);
  const { job } = s.service.registerJob('cifar10', 'ran', { command: ['train'] });
  // As a job that ran and was cancelled leaves it: no allocation, a start time.
  Object.assign(job, { state: 'cancelled', startedAt: 1, finishedAt: 2, generation: 5 });
  return { s, id: job.id, asked };
}

describe("an ended job's missing rank", () => {
  it('names the ranks its newest generation with a log keeps, or the generation asked for', async () => {
    const { s, id } = await endedJobWithRanks(3);
    await expect(jobLogs(s.service, id, { rank: 7, tail: 10 })).rejects.toThrow(
      `job ${id} has no log kept for rank 7: generation 4, its newest with a log, has the logs of ranks 0 to 2`,
    );
    await expect(jobLogs(s.service, id, { rank: 3, generation: 4, tail: 10 })).rejects.toThrow(
      `job ${id} has no log kept for generation 4, rank 3: generation 4 has the logs of ranks 0 to 2`,
    );
  });

  it('says rank 0 only for one replica, and every way a log can be missing when reading fails', async () => {
    const one = await endedJobWithRanks(1);
    await expect(jobLogs(one.s.service, one.id, { rank: 2, tail: 10 })).rejects.toThrow(
      'generation 4, its newest with a log, has the logs of rank 0 only',
    );
    const failing = await endedJobWithRanks(3, true);
    await expect(jobLogs(failing.s.service, failing.id, { rank: 5, tail: 10 })).rejects.toThrow(
      /it is older than the job's newest 10 generations/,
    );
  });

  it('names the run to ask for when the generation asked came after its last one', async () => {
    // Generation 5 is the one the job moved on to as it ended: it never ran, generation 4 did.
    const { s, id } = await endedJobWithRanks(3);
    for (const generation of [5, 6])
      await expect(jobLogs(s.service, id, { rank: 0, generation, tail: 10 })).rejects.toThrow(
        `job ${id} has no log kept for generation ${generation}, rank 0: it has ended (cancelled), and generation 4 is its newest with a log of rank 0`,
      );
    await expect(jobLogs(s.service, id, { rank: 1, generation: 5, tail: 10 })).rejects.toThrow(
      'generation 4 is its newest with a log of rank 1',
    );
    // An older generation with no log: not a later one, so every way a log can be missing.
    await expect(jobLogs(s.service, id, { rank: 0, generation: 2, tail: 10 })).rejects.toThrow(
      /it is older than the job's newest 10 generations/,
    );
  });

  it('looks no further than the rank asked for', async () => {
    const { s, id, asked } = await endedJobWithRanks(200);
    await expect(jobLogs(s.service, id, { rank: 150, generation: 4, tail: 10 })).resolves.toBeDefined();
    asked.length = 0;
    await expect(jobLogs(s.service, id, { rank: 250, generation: 4, tail: 10 })).rejects.toThrow(
      'generation 4 has the logs of ranks 0 to 199',
    );
    // The rank asked, then ranks 0 to 200 (the first missing one ends the count).
    expect(asked).toHaveLength(1 + 201);
  });
});
