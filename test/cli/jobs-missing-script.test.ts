/**
 * `boa jobs submit cifar10 -- node examples/nosuch.mjs` from a folder without it: refused at once by a
 * local executor, where before the job held paid GPUs through three failed runs (script-check.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { startProcessService } from './process-service.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

it('refuses a script missing from the folder it is submitted from, saying where it looked', async () => {
  const { s } = await startProcessService(cleanups);
  const run = await s.boa(['jobs', 'submit', 'cifar10', '--', 'node', 'examples/nosuch.mjs']);
  expect(run.status).toBe(2);
  expect(run.stderr).toContain(
    `no such file: examples/nosuch.mjs (looked at ${join(s.cwd, 'examples/nosuch.mjs')}, from the working directory ${s.cwd})`,
  );
  expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
  // There, it is submitted.
  writeFileSync(join(s.cwd, 'train.mjs'), 'setInterval(() => {}, 1000);\n');
  const ok = await s.boa(['--json', 'jobs', 'submit', 'cifar10', '--', 'node', 'train.mjs']);
  expect(ok.status, ok.stderr).toBe(0);
  expect(JSON.parse(ok.stdout).job.workload.command).toEqual(['node', 'train.mjs']);
});
