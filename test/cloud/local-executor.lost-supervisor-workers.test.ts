import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/cloud/local/executor.ts';
import { processExists } from '../../src/cloud/local/replica-processes.ts';
import { groupMembers } from '../helpers/replica-groups.ts';
import { localExecutorDirs } from './local-executor-dirs.ts';
import { settle } from './local-executor-settle.ts';
import { lines, loggerPid, lostJob as job, loseSupervisor, termLogger, until } from './lost-supervisor.ts';

/**
 * A lost supervisor's command shaped as torchrun's: an agent in the command's group, its workers in
 * sessions of their own carrying the replica's environment. Each gets one SIGTERM, as with the
 * supervisor alive: the agent passes it to its workers, so boa sending them one too made two, and a
 * second SIGTERM cuts a handler's save short.
 */
const dirs = localExecutorDirs('boa-lost-workers-');
afterEach(() => dirs.cleanup());

describe.runIf(existsSync('/proc/self/environ'))(
  "local executor: a lost supervisor's torchrun-shaped command",
  () => {
    it('its worker gets the SIGTERM from its agent only, once; both are SIGKILLed after the grace', async () => {
      const dataDir = dirs.temp();
      const terms = join(dataDir, 'terms');
      const command = termLogger(dataDir, terms, 'agent', true);
      const { group } = await loseSupervisor(dataDir, job(1, command), (g) => dirs.track(g));
      const worker = await loggerPid(terms, 'worker');
      dirs.track(worker); // its own session: the command's group does not hold it
      await loggerPid(terms, 'agent');
      const boa = new LocalExecutor({ dataDir, terminationGraceSeconds: 2 });
      try {
        const next = job(2, ['sleep', '300']);
        await boa.reconcile([next]);
        await until(() => lines(terms).length >= 2);
        await new Promise((r) => setTimeout(r, 500));
        expect(lines(terms)).toEqual(['agent', 'worker']);
        await settle(boa, [next], (s) => s.length === 1 && s[0]?.generation === 2);
        expect(groupMembers(group)).toEqual([]);
        await until(() => !processExists(worker));
        expect(lines(terms)).toEqual(['agent', 'worker']);
        await settle(boa, [], (s) => s.length === 0);
      } finally {
        await boa.close();
      }
    });

    it('a worker left without its agent gets the SIGTERM from boa, once', async () => {
      const dataDir = dirs.temp();
      const terms = join(dataDir, 'terms');
      const command = termLogger(dataDir, terms, 'agent', true);
      const { group } = await loseSupervisor(dataDir, job(1, command), (g) => dirs.track(g));
      const worker = await loggerPid(terms, 'worker');
      dirs.track(worker);
      // The agent killed too: nothing is left to pass a SIGTERM on to the worker.
      process.kill(await loggerPid(terms, 'agent'), 'SIGKILL');
      await until(() => groupMembers(group).length === 0);
      const boa = new LocalExecutor({ dataDir, terminationGraceSeconds: 2 });
      try {
        const next = job(2, ['sleep', '300']);
        await boa.reconcile([next]);
        await until(() => lines(terms).length >= 1);
        await new Promise((r) => setTimeout(r, 500));
        expect(lines(terms)).toEqual(['worker']);
        expect(processExists(worker), 'SIGKILLed before its grace was over').toBe(true);
        await settle(boa, [next], (s) => s.length === 1 && s[0]?.generation === 2);
        expect(processExists(worker)).toBe(false);
        expect(lines(terms)).toEqual(['worker']);
        await settle(boa, [], (s) => s.length === 0);
      } finally {
        await boa.close();
      }
    });
  },
);
