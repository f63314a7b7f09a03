/**
 * `boa jobs logs` of a job that ran more than once: the newest generation is shown, and stderr says
 * how to read the runs before it (a newcomer's job showed its last run alone, found in a trial).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startProcessService, untilLog } from './process-service.ts';

const cleanups: Array<() => Promise<void>> = [];

/** A script whose rank 0 prints 'first run' and fails once (a marker file says so), then runs `after` and stays up. */
const failingOnce = (marker: string, after: string) => `
    const fs = require('node:fs');
    if (process.env.NODE_RANK === '0' && !fs.existsSync(${JSON.stringify(marker)})) {
      console.log('first run');
      fs.writeFileSync(${JSON.stringify(marker)}, '');
      process.exit(1);
    }
    ${after}
    setInterval(() => {}, 1000);`;
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

it('says which generation it shows and how to read the runs before it', async () => {
  const { s, dataDir } = await startProcessService(cleanups, { restartBackoffSeconds: 1 });
  const marker = join(dataDir, 'failed-once');
  // Rank 0's first run fails (its other ranks, one per node, see no marker of their own); the run
  // after the restart stays up.
  const script = failingOnce(marker, "console.log('second run');");
  const made = await s.request('POST', '/v1/jobs', {
    class: 'cifar10',
    workload: { command: [process.execPath, '-e', script] },
  });
  const id = made.body.id as number;
  await untilLog(s, id, 'rank=0&tail=100', (text) => text === 'second run\n');
  const logs = await s.boa(['jobs', 'logs', String(id)]);
  expect(existsSync(marker)).toBe(true);
  expect(logs.stdout).toBe('second run\n');
  expect(logs.status).toBe(0);
  const { generation } = (await s.request('GET', `/v1/jobs/${id}`)).body as { generation: number };
  const said = new RegExp(
    `^boa: this is generation ${generation}, the newest with a log of rank 0 kept; the newest run before it with a log: boa jobs logs ${id} --generation (\\d+)\n$`,
  ).exec(logs.stderr);
  expect(said, logs.stderr).not.toBeNull();
  // The run it names is the first one, shown alone with nothing said.
  const named = await s.boa(['jobs', 'logs', String(id), '--generation', said?.[1] ?? '']);
  expect(named.stdout).toBe('first run\n');
  expect(named.stderr).toBe('');
}, 120_000);

it("says, between a crash and the restart's first line, that the new run has not written yet and how to read the one before", async () => {
  const { s, dataDir } = await startProcessService(cleanups, { restartBackoffSeconds: 1 });
  const marker = join(dataDir, 'failed-once');
  // Rank 0's first run writes and fails; the run after the restart writes nothing and stays up.
  const script = failingOnce(marker, '');
  const made = await s.request('POST', '/v1/jobs', {
    class: 'cifar10',
    workload: { command: [process.execPath, '-e', script] },
  });
  const id = made.body.id as number;
  // Until the restarted run's (empty) log is the newest kept: before, the first run's is shown.
  await untilLog(s, id, 'rank=0&tail=100', (text) => existsSync(marker) && text === '');
  const logs = await s.boa(['jobs', 'logs', String(id)]);
  expect(existsSync(marker)).toBe(true);
  expect(logs.stdout).toBe('');
  expect(logs.status).toBe(0);
  const shown = Number(/generation (\d+)/.exec(logs.stderr)?.[1]);
  expect(logs.stderr).toMatch(
    new RegExp(
      `^boa: job ${id}'s rank 0 has written nothing yet in generation ${shown}, its newest run \\(after a restart or rescale\\); the run before it: boa jobs logs ${id} --generation (\\d+)\\n$`,
    ),
  );
  // The command it names shows the first run's output.
  const named = Number(/--generation (\d+)\n$/.exec(logs.stderr)?.[1]);
  expect(named).toBeLessThan(shown);
  const before = await s.boa(['jobs', 'logs', String(id), '--generation', String(named)]);
  expect(before.stdout).toBe('first run\n');
}, 120_000);
