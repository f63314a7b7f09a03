import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDemoJobNames } from '../../scripts/lib/demo-names.ts';
import type { TraceJob } from '../../src/core/trace.ts';

const REPO = resolve(import.meta.dirname, '../..');
const job = (name: string, time = 0): TraceJob =>
  ({ name, time, application: 'cifar10', numReplicas: 1, batchSize: 128 }) as TraceJob;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the demo's job names", () => {
  it('takes names the service takes, each once', () => {
    expect(() => checkDemoJobNames([job('cifar10-0'), job('cifar10-1')], 't.csv')).not.toThrow();
  });

  it('refuses a repeated name, a name that reads as a job id, and one with a control character', () => {
    expect(() => checkDemoJobNames([job('a'), job('b'), job('a')], 't.csv')).toThrow(
      't.csv: job name "a" appears more than once',
    );
    expect(() => checkDemoJobNames([job('7')], 't.csv')).toThrow(
      't.csv: job name "7" reads as a job id, which the service refuses as a name: rename it, e.g. cifar10-7',
    );
    expect(() => checkDemoJobNames([job('a\u001bb')], 't.csv')).toThrow('is not one the service takes');
  });

  it('the demo refuses such a trace in one line, exit 2, before it runs anything', () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-demo-names-'));
    dirs.push(dir);
    const trace = join(dir, 'numbered.csv');
    writeFileSync(
      trace,
      'name,time,application,num_replicas,batch_size\n1,0,cifar10,1,128\n2,600,cifar10,1,128\n',
    );
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', resolve(REPO, 'scripts/demo.ts'), '--trace', trace, '--budget', '40'],
      { cwd: REPO, encoding: 'utf8', env: { ...process.env, TMPDIR: dir } },
    );
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toContain('job name "1" reads as a job id');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});
