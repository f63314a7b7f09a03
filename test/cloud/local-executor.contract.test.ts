import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { processExists as alive } from '../../src/cloud/local/replica-processes.ts';
import { killReplicaGroups } from '../helpers/replica-groups.ts';
import { type ExecutorHarness, executorContract, type ReplicaRef } from './executor-contract.ts';

const REPLICA = resolve(import.meta.dirname, '../fixtures/replica.mjs');

/** Local processes under a temp DATA_DIR; the replica fixture records its starts and SIGTERMs. */
export async function localHarness(): Promise<ExecutorHarness> {
  const dataDir = mkdtempSync(join(tmpdir(), 'boa-exec-'));
  const controlDir = mkdtempSync(join(tmpdir(), 'boa-exec-control-'));
  const base = (r: ReplicaRef) => join(controlDir, `${r.jobId}-${r.generation}-${r.rank}`);
  const events = (r: ReplicaRef) =>
    existsSync(`${base(r)}.events`)
      ? readFileSync(`${base(r)}.events`, 'utf8')
          .split('\n')
          .filter((line) => line.endsWith('}'))
          .map((line) => JSON.parse(line) as { event: string; pid?: number; env?: Record<string, string> })
      : [];
  const supervisorPid = (r: ReplicaRef) =>
    JSON.parse(
      readFileSync(join(dataDir, 'jobs', String(r.jobId), String(r.generation), `${r.rank}.pid`), 'utf8'),
    ).pid as number;
  return {
    nodes: ['local-1', 'local-2'],
    create: async ({ terminationGraceSeconds }) => new LocalExecutor({ dataDir, terminationGraceSeconds }),
    workload: (options = {}) => ({
      command: [process.execPath, REPLICA],
      env: {
        CONTROL_DIR: controlDir,
        IGNORE_TERM: options.ignoreTerm ? '1' : '0',
        TERM_EXIT_CODE: options.termExitsZero ? '0' : '143',
      },
    }),
    // Written whole, then renamed: the replica polls for the file and must never read it empty (exit 0).
    exit: async (r, code) => {
      writeFileSync(`${base(r)}.exit-with.tmp`, String(code));
      renameSync(`${base(r)}.exit-with.tmp`, `${base(r)}.exit-with`);
    },
    kill: async (r) => {
      process.kill(-supervisorPid(r), 'SIGKILL');
    },
    say: async (r, text) => {
      writeFileSync(`${base(r)}.say.tmp`, text);
      renameSync(`${base(r)}.say.tmp`, `${base(r)}.say`);
    },
    // As a shutdown does: SIGTERM to every process of the replica's group, supervisor included.
    interrupt: async (r) => {
      process.kill(-supervisorPid(r), 'SIGTERM');
    },
    starts: async (r) => events(r).flatMap((e) => (e.event === 'start' ? [e.env ?? {}] : [])),
    terminations: async (r) => events(r).filter((e) => e.event === 'term').length,
    running: async (r) => events(r).filter((e) => e.event === 'start' && alive(e.pid as number)).length,
    cleanup: async () => {
      killReplicaGroups(join(dataDir, 'jobs'));
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(controlDir, { recursive: true, force: true });
    },
  };
}

executorContract('local processes', localHarness);
