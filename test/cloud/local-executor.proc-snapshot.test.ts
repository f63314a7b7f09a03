import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';

/** How often /proc is listed: each listing is a scan of every process (its stat, its environment). */
const listed = vi.hoisted(() => ({ proc: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readdirSync = ((path: Parameters<typeof fs.readdirSync>[0], ...rest: unknown[]) => {
    if (path === '/proc') listed.proc++;
    return (fs.readdirSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readdirSync;
  return { ...fs, default: { ...fs, readdirSync }, readdirSync };
});

/**
 * A pass with many lost replicas (supervisors gone without an exit record) reads /proc once for all of
 * them: a scan a replica, several times a pass, every second of a stop's grace, blocked the API for
 * seconds on a busy host.
 */
const dirs = localExecutorDirs('boa-proc-snapshot-');
afterEach(() => dirs.cleanup());

describe.runIf(existsSync('/proc/self/environ'))('local executor: /proc once a pass', () => {
  it('lists /proc at most once in a pass over 20 lost replicas', async () => {
    const dataDir = dirs.temp();
    // A pid no process holds any more (reaped): each replica's supervisor is gone, its command maybe not.
    const gone = spawnSync('true').pid as number;
    for (let jobId = 1; jobId <= 20; jobId++) {
      const dir = join(dataDir, 'jobs', String(jobId), '1');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, '0.pid'), JSON.stringify({ pid: gone, node: 'local-1', startedAt: 0 }));
    }
    const boa = new LocalExecutor({ dataDir, terminationGraceSeconds: 2 });
    try {
      listed.proc = 0;
      // None wanted any more: each is looked at for what of it still runs (nothing), then forgotten.
      expect(await boa.reconcile([])).toEqual([]);
      expect(listed.proc).toBe(1);
      // Nothing left that needs /proc: not listed at all.
      listed.proc = 0;
      await boa.reconcile([]);
      expect(listed.proc).toBe(0);
    } finally {
      await boa.close();
    }
  });
});
