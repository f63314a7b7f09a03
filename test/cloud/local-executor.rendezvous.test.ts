import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob, ReplicaStatus } from '../../src/service/ports.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function setUp() {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-rdzv-'));
  const executors: LocalExecutor[] = [];
  const open = () => {
    const executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 1 });
    executors.push(executor);
    return executor;
  };
  cleanups.push(async () => {
    for (const executor of executors) await executor.close();
    killReplicaGroups(join(dataDir, 'jobs'));
    rmSync(dataDir, { recursive: true, force: true });
  });
  return open;
}

/** A one-replica job as the service asks for it: MASTER_PORT from the executor's rendezvous. */
function job(executor: LocalExecutor, jobId: number, generation: number): DesiredJob {
  const { port } = executor.rendezvous(jobId, generation);
  const env = { MASTER_PORT: String(port) };
  const workload = { command: ['sleep', '30'] };
  return {
    jobId,
    generation,
    replicas: [{ jobId, generation, rank: 0, node: 'local-1', gpus: 1, workload, env }],
  };
}

async function settle(
  executor: LocalExecutor,
  desired: DesiredJob[],
  done: (s: readonly ReplicaStatus[]) => boolean,
) {
  for (let i = 0; i < 200; i++) {
    const statuses = await executor.reconcile(desired);
    if (done(statuses)) return statuses;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out');
}

describe('local executor rendezvous', () => {
  it('gives two jobs running at the same time different MASTER_PORTs', async () => {
    const executor = setUp()();
    // Job 1 has been rescaled/restarted 7 more times than job 2 (each change is a new generation):
    // both rank 0s listen on 127.0.0.1 at once.
    const a = executor.rendezvous(1, 8);
    const b = executor.rendezvous(2, 1);
    expect(a.addr).toBe(b.addr);
    expect(a.port).not.toBe(b.port);
  });

  it("chooses ports below Linux's ephemeral range, none twice among live generations", async () => {
    const executor = setUp()();
    const ports = new Set<number>();
    for (let jobId = 1; jobId <= 200; jobId++) {
      const { port } = executor.rendezvous(jobId, 1);
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(32_768);
      ports.add(port);
    }
    expect(ports.size).toBe(200);
  });

  it('keeps a running generation’s port across a restart of the service, and keeps it taken', async () => {
    const open = setUp();
    const first = open();
    const running = job(first, 1, 3);
    await settle(first, [running], (s) => s[0]?.phase === 'running');
    await first.close();

    const restarted = open();
    const { port } = restarted.rendezvous(1, 3);
    expect(String(port)).toBe(running.replicas[0]?.env.MASTER_PORT);
    for (let jobId = 2; jobId <= 50; jobId++) expect(restarted.rendezvous(jobId, 1).port).not.toBe(port);
    await settle(restarted, [], (s) => s.length === 0);
  });
});
