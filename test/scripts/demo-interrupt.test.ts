/**
 * Ctrl-C during `npm run demo -- --executor local` (no --state): the replay stops, its replicas are
 * stopped and its temporary state is removed, so an interrupted demo leaves no folder and no process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { groupMembers, replicaGroups } from '../helpers/replica-groups.ts';
import { POLLUX, REPO } from '../helpers/run-script.ts';

const TRACE = resolve(POLLUX, 'workloads/workload-1.csv');
const temp = mkdtempSync(join(tmpdir(), 'boa-demo-interrupt-'));
const seenGroups = new Set<number>();
afterAll(() => {
  for (const pid of seenGroups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone, as the test expects.
    }
  }
  rmSync(temp, { recursive: true, force: true });
});

/** The process groups of the replicas recorded under the demo's state folder(s), commands' included. */
function recordedReplicaGroups(): number[] {
  return readdirSync(temp)
    .filter((d) => d.startsWith('boa-demo-'))
    .flatMap((state) => replicaGroups(join(temp, state, 'jobs')));
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('an interrupted demo', () => {
  it('stops its replicas and removes its temporary state', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        resolve(REPO, 'scripts/demo.ts'),
        ...['--trace', TRACE, '--apps', 'cifar10,bert,deepspeech2', '--budget', '40'],
        ...['--speed', '600', '--executor', 'local'],
      ],
      { cwd: REPO, env: { ...process.env, TMPDIR: temp }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));

    // Interrupt once a few replicas run.
    for (let i = 0; i < 1200 && seenGroups.size < 3; i++) {
      for (const pid of recordedReplicaGroups()) seenGroups.add(pid);
      await sleep(100);
    }
    expect(seenGroups.size, stderr).toBeGreaterThanOrEqual(3);
    expect([...seenGroups].some(groupAlive)).toBe(true);
    child.kill('SIGINT');
    // Recorded until it exits, so every replica it started is checked (and killed after) as well as
    // the first three: a demo that left them running leaked them past the test (found when it did).
    const recording = setInterval(() => {
      try {
        for (const pid of recordedReplicaGroups()) seenGroups.add(pid);
      } catch {
        // A folder removed while read: the next look, or none once it is all gone.
      }
    }, 50);
    const code = await exited;
    clearInterval(recording);

    expect(code, stderr).toBe(130);
    expect(stdout).toBe('');
    expect(readdirSync(temp).filter((d) => d.startsWith('boa-demo-'))).toEqual([]);
    // A zombie is no process left running: its supervisor is gone and the container's init may never
    // reap it (CI's does not), as the executor itself counts it (groupLives).
    expect([...seenGroups].filter((group) => groupMembers(group).length > 0)).toEqual([]);
  }, 180_000);
});
