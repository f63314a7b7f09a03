/**
 * examples/pytorch/train.py under torchrun, submitted to the real service (its own process, the local
 * executor, nodes of 1 GPU each) with the torchrun line docs/jobs.md gives users: it trains on 2 nodes,
 * a budget cut rescales it to 1 and the new generation resumes at the exact sample the old one stopped
 * at, and a cancel reaches the workers through torchrun, rank 0 checkpointing before the job ends.
 * Skipped, as the other PyTorch runs, without a Python that has torch.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { unusedPort } from '../cli/cli-harness.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { killHard, startProcess, type ServiceProcess } from '../service/process-harness.ts';
import { until } from './processes.ts';
import { findTorchPython } from './torch-python.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const torchPython = findTorchPython();
const DOC = readFileSync(join(ROOT, 'docs/jobs.md'), 'utf8');

/**
 * The `sh -c` script docs/jobs.md tells users to submit, with torchrun as `python -m
 * torch.distributed.run` of the Python that has torch, the flags the doc names for torch 1.13 on Python
 * 3.11 (taken by every torchrun), and train.py's arguments replaced by `args`.
 */
function documentedScript(python: string, args: string): string {
  const line = /-- sh -c '(exec torchrun [^']*? examples\/pytorch\/train\.py)[^']*'/.exec(DOC);
  if (!line) throw new Error("docs/jobs.md no longer shows a `sh -c 'exec torchrun ... train.py'` submit");
  const workaround = /add `(--redirects=\S+\s+--tee=\S+)` after `torchrun`/.exec(DOC);
  if (!workaround) throw new Error('docs/jobs.md no longer names the flags for torch 1.13 on Python 3.11');
  const flags = workaround[1]!.replace(/\s+/g, ' ');
  return `${line[1]!.replace('exec torchrun', `exec '${python}' -m torch.distributed.run ${flags}`)} ${args}`;
}

/**
 * The replicas' processes under this data dir, by the variable boa marks them with (torchrun's workers
 * leave the replica's session, so its process group does not find them), and their supervisors, by their
 * command line: a supervisor exports the mark after it starts, so only the tools it runs carry it (its
 * exit record's tr and sed), and a look between two of them found nothing left while it still ran.
 */
function jobProcesses(dataDir: string): number[] {
  const jobs = join(dataDir, 'jobs');
  const mark = `BOA_SIGTERM_FILE=${jobs}/`;
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const supervisor = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (supervisor.includes('replica-supervisor.sh') && supervisor.includes(`${jobs}/`))
        found.push(Number(name));
      else if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(mark)) found.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** A process's command line, or that it has ended since it was listed. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return `${pid} (ended since)`;
  }
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean();
});

describe.skipIf(!torchPython)('examples/pytorch/train.py under torchrun through boa', () => {
  it(
    'trains on 2 nodes, resumes on 1 at the sample it stopped at, checkpoints on cancel',
    { timeout: 300_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'boa-torchrun-'));
      const dataDir = join(dir, 'data');
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const config = join(dir, 'config.json');
      writeFileSync(
        config,
        JSON.stringify({
          local: { bootSeconds: 0, releaseSeconds: 0 },
          tickSeconds: 1,
          replicaCheckSeconds: 1,
        }),
      );
      const port = await unusedPort();
      // g4dn.xlarge: 1 GPU a node, so 2 GPUs are 2 replicas, 2 torchruns meeting at MASTER_PORT.
      const service: ServiceProcess = await startProcess(['--config', config], {
        BOA_DATA_DIR: dataDir,
        BOA_PORT: String(port),
        BOA_INSTANCE_TYPE: 'g4dn.xlarge',
      });
      cleanups.push(async () => {
        await killHard(service.child);
        killReplicaGroups(join(dataDir, 'jobs'));
        for (const pid of jobProcesses(dataDir)) process.kill(pid, 'SIGKILL');
      });
      const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
      const api = async (method: string, path: string, body?: unknown) => {
        const answer = await fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const json = (await answer.json()) as Record<string, unknown>;
        if (!answer.ok) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(json)}`);
        return json;
      };
      const log = (generation: number) => {
        const file = join(dataDir, 'jobs', '1', String(generation), '0.log');
        return existsSync(file) ? readFileSync(file, 'utf8') : '';
      };
      // Until the pattern is in rank 0's log, or torchrun has died of its arguments (then restarted in
      // vain: a job failing so would otherwise take the whole wait to say so).
      const seen = async (generation: number, pattern: RegExp, seconds: number) => {
        const crashed = /usage: run\.py|AttributeError/;
        await until(() => pattern.test(log(generation)) || crashed.test(log(generation)), seconds);
        return pattern.test(log(generation));
      };

      await api('PUT', '/v1/budget', { gpuHoursPerHour: 2 });
      // 8 steps an epoch of 2048 samples; 40 epochs, far more than the test lets it run.
      const script = documentedScript(
        torchPython as string,
        '--epochs 40 --samples 2048 --global-batch 256 --poll-seconds 0.5',
      );
      const job = await api('POST', '/v1/jobs', {
        class: 'cifar10',
        name: 'torchrun',
        // TMPDIR: torch 1.13's torchrun leaves a torchelastic_* folder there at every start.
        workload: { command: ['sh', '-c', script], workingDir: ROOT, env: { TMPDIR: dir } },
      });
      expect(job.id).toBe(1);

      expect(await seen(1, /epoch 1\/40 done: WORLD_SIZE=2 /, 120), log(1)).toBe(true);
      expect(log(1)).toContain('rank 0 of WORLD_SIZE=2 (generation 1): from epoch 0 sample 0');
      // Rank 0's reporter reached boa through torchrun's environment (its token, its URL).
      expect((await api('GET', '/v1/jobs/1')).reportedProgress).toBe(true);

      await api('PUT', '/v1/budget', { gpuHoursPerHour: 1 });
      expect(await seen(2, /epoch \d+\/40 done: WORLD_SIZE=1 /, 120), log(1) + log(2)).toBe(true);
      const stopped = /stopping \(.*\) at epoch (\d+) sample (\d+): saved /.exec(log(1));
      expect(stopped, log(1)).not.toBeNull();
      const [, epoch, sample] = stopped!;
      expect(Number(epoch)).toBeGreaterThanOrEqual(1);
      expect(log(2)).toContain(`rank 0 of WORLD_SIZE=1 (generation 2): from epoch ${epoch} sample ${sample}`);

      const checkpoint = join(dataDir, 'jobs', '1', 'checkpoint', 'checkpoint.pt');
      const cancelledAt = Date.now();
      expect((await api('POST', '/v1/jobs/1/cancel')).state).toBe('cancelled');
      // SIGTERM to torchrun, by it to the worker, whose client makes it stop at its next step and save.
      expect(await seen(2, /stopping \(SIGTERM\) at epoch \d+ sample \d+: saved /, 60), log(2)).toBe(true);
      expect(statSync(checkpoint).mtimeMs).toBeGreaterThanOrEqual(cancelledAt - 1000);
      // Within torchrun's 30 s: nothing of the job is left, neither torchrun nor its worker, nor the
      // supervisor recording the exit.
      const left = () => jobProcesses(dataDir);
      const described = () =>
        left()
          .map((pid) => commandLine(pid))
          .join('\n') + `\n${log(2).split('\n').slice(-12).join('\n')}`;
      expect(await until(() => left().length === 0, 30), described()).toBe(true);
      expect(log(2)).not.toMatch(/AttributeError|unrecognized arguments/);
      // torchrun's exit 1 on each of boa's SIGTERMs is a stop: no restart counted, no failure.
      const ended = await api('GET', '/v1/jobs/1');
      expect([ended.state, ended.restarts]).toEqual(['cancelled', 0]);
    },
  );
});
