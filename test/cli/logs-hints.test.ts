/**
 * What `boa jobs logs` says about the runs before the one it shows names only runs whose logs are kept
 * (found in review: it said "--generation 1 to N-1" and "the newest kept", though boa keeps the newest
 * 10 generations and a job queued again gets a generation with no run, so the hint led to 404s).
 */
import { expect, it } from 'vitest';
import type { BoaClient } from '../../src/cli/client.ts';
import { CliError, EXIT } from '../../src/cli/errors.ts';
import { earlierRunsLine, nothingWrittenLine } from '../../src/cli/commands/logs-hints.ts';

/** A service whose job 7 keeps rank 0's logs of these generations only. */
function clientKeeping(kept: number[]): BoaClient {
  return {
    textAnswer: async (_method: string, path: string) => {
      const generation = Number(new URL(path, 'http://boa').searchParams.get('generation'));
      if (kept.includes(generation)) return { text: 'a line\n', headers: new Headers() };
      throw new CliError('no log', EXIT.failed, '{"error":{"code":"no_log"}}');
    },
  } as unknown as BoaClient;
}

it('names the newest earlier generation whose log is kept, not the pruned ones', async () => {
  // Generations 1 and 2 pruned (the newest 10 of 12 kept), 11 a requeue that never ran.
  const line = await earlierRunsLine(clientKeeping([3, 4, 5, 6, 7, 8, 9, 10, 12]), 7, 0, 12);
  expect(line).toBe(
    'this is generation 12, the newest with a log of rank 0 kept; the newest run before it with a log: boa jobs logs 7 --generation 10',
  );
});

it('says when no earlier run has a log', async () => {
  expect(await earlierRunsLine(clientKeeping([4]), 7, 2, 4)).toBe(
    "this is generation 4, the newest with a log of rank 2 kept; no earlier run's log in the 10 generations before it",
  );
});

// Generation numbers are looked back over, not kept logs: a job queued again 11 times has a kept log
// 12 numbers back, which "no earlier run's log is kept" denied (found in review).
it('says how far back it looked, in no more than 10 requests, when an older log is kept', async () => {
  const client = clientKeeping([1, 13]);
  const asked: string[] = [];
  const textAnswer = client.textAnswer.bind(client);
  client.textAnswer = (async (method: 'GET', path: string) => {
    asked.push(path);
    return textAnswer(method, path);
  }) as BoaClient['textAnswer'];
  expect(await earlierRunsLine(client, 7, 0, 13)).toBe(
    "this is generation 13, the newest with a log of rank 0 kept; no earlier run's log in the 10 generations before it",
  );
  expect(asked).toHaveLength(10);
});

it('names the rank in the command for a rank other than 0', async () => {
  expect(await nothingWrittenLine(clientKeeping([2]), 7, 3, 4, false)).toBe(
    "job 7's rank 3 has written nothing yet in generation 4, its newest run (after a restart or rescale); the run before it: boa jobs logs 7 --rank 3 --generation 2",
  );
});

/** A service answering 503 for every earlier generation's log (restarting, overloaded). */
const unavailable = {
  textAnswer: async () => {
    const body = '{"error":{"code":"unavailable","message":"overloaded"}}';
    throw new CliError('the service failed: overloaded', EXIT.failed, body);
  },
} as unknown as BoaClient;

// Said after the log went to stdout: a failed lookup failing the command changed its exit code
// for scripts (found in review); the hint is said without the earlier run.
it('says the hint without the earlier run when looking it up fails', async () => {
  expect(await earlierRunsLine(unavailable, 7, 0, 5)).toBe(
    'this is generation 5, the newest with a log of rank 0 kept',
  );
  expect(await nothingWrittenLine(unavailable, 7, 0, 5, false)).toBe(
    "job 7's rank 0 has written nothing yet in generation 5, its newest run (after a restart or rescale)",
  );
});

// Found in a newcomer trial: a job failed at start had each run's log empty; the hint said "nothing
// yet" of a job that had ended and pointed at the run before, as empty.
it('says nothing was written, without "yet", of a job that ended, and points past runs that wrote nothing', async () => {
  const client = {
    textAnswer: async (_method: string, path: string) => {
      const generation = Number(new URL(path, 'http://boa').searchParams.get('generation'));
      if (generation === 1) return { text: 'Traceback\n', headers: new Headers() };
      if (generation === 2 || generation === 3) return { text: '', headers: new Headers() };
      throw new CliError('no log', EXIT.failed, '{"error":{"code":"no_log"}}');
    },
  } as unknown as BoaClient;
  expect(await nothingWrittenLine(client, 7, 0, 4, false, true)).toBe(
    "job 7's rank 0 wrote nothing in generation 4, its last run; the run before it: boa jobs logs 7 --generation 1",
  );
  expect(await nothingWrittenLine(clientKeeping([]), 7, 0, 1, false, true)).toBe(
    "job 7's rank 0 has written nothing",
  );
  expect(await earlierRunsLine(client, 7, 0, 4)).toBe(
    'this is generation 4, the newest with a log of rank 0 kept; the newest run before it with a log: boa jobs logs 7 --generation 1',
  );
});
