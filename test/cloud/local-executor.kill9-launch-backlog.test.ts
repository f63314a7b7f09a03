import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { commandMark } from './command-mark.ts';
import { commandPids, waitFor } from './local-commands.ts';

/**
 * A service killed with SIGKILL while its launcher still holds start requests on its stdin (the launcher
 * boots in 100-300 ms on a loaded machine): the launcher must not start them, or a service restarted at
 * once adopts nothing (no supervisor exists yet) and starts every rank again beside them. Timing-bound:
 * on a machine whose launcher boots within 20 ms the old code passes too.
 */
const MARK = commandMark(3091);
const job: DesiredJob = {
  jobId: 1,
  generation: 1,
  replicas: [0, 1, 2, 3].map((rank) => ({
    jobId: 1,
    generation: 1,
    rank,
    node: 'local-1',
    gpus: 1,
    workload: { command: MARK },
    env: {},
  })),
};
/** The pids running the job's command. */
const commands = () => commandPids(MARK);

it('a service killed with SIGKILL while its launcher still holds start requests: the restarted one starts no replica twice', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-k9-'));
  const service = join(dataDir, 'service.ts');
  // The service: asks for the job's four replicas, and is killed 20 ms later (its launcher still booting).
  writeFileSync(
    service,
    `import { LocalExecutor } from ${JSON.stringify(resolve('src/cloud/local/executor.ts'))};
const executor = new LocalExecutor({ dataDir: ${JSON.stringify(dataDir)}, terminationGraceSeconds: 2 });
void executor.reconcile([${JSON.stringify(job)}]);
setTimeout(() => process.stdout.write('asked\\n'), 20);
setInterval(() => undefined, 1000);
`,
  );
  let executor: LocalExecutor | undefined;
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', service], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((r) => child.stdout.once('data', () => r()));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    // Restarted at once (a supervisor restarting it quickly, a fast boot).
    executor = new LocalExecutor({ dataDir, terminationGraceSeconds: 2 });
    const restarted = executor;
    // All four ranks running first (a fixed 2 s can find fewer on a loaded machine: its own launcher still
    // booting), then 2 s more of passes, in which a request the killed launcher held would have started.
    await waitFor('the 4 ranks running', async () => {
      await restarted.reconcile([job]);
      return commands().length >= 4;
    });
    for (let i = 0; i < 40; i++) {
      await executor.reconcile([job]);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(commands().length, 'copies of the job running (4 ranks)').toBe(4);
  } finally {
    // Replicas outlive their service by design: stop them, so none writes into the folder removed next.
    for (let i = 0; executor && i < 100 && (await executor.reconcile([])).length > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    await executor?.close();
    for (const pid of commands()) process.kill(pid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 });
  }
}, 120_000);
