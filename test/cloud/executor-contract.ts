/**
 * The Executor port's contract (src/service/ports.ts), run against every adapter through a harness:
 * local processes (local-executor.contract.test.ts) and Kubernetes pods over the fake API server.
 */
import { afterEach, beforeEach, describe } from 'vitest';
import type { DesiredJob, Executor, ReplicaStatus } from '../../src/service/ports.ts';
import { adoptionCases } from './executor-contract-adoption.ts';
import type {
  ContractContext,
  ContractOptions,
  ExecutorHarness,
  ReplicaRef,
} from './executor-contract-harness.ts';
import { logCases } from './executor-contract-logs.ts';
import { outsideCases } from './executor-contract-outside.ts';
import { startCases } from './executor-contract-starts.ts';
import { stopCases } from './executor-contract-stops.ts';

export {
  type ContractOptions,
  desiredJob,
  type ExecutorHarness,
  type ReplicaRef,
} from './executor-contract-harness.ts';

export function executorContract(
  name: string,
  makeHarness: () => Promise<ExecutorHarness>,
  options: ContractOptions = {},
) {
  // Each wait returns as soon as its state is reached: 20 s, as a loaded machine starts processes (the
  // local executor's launcher, its replicas' shells) slowly.
  const settleMs = options.settleMs ?? 20_000;
  describe(`Executor contract: ${name}`, () => {
    let harness: ExecutorHarness;
    const executors: Executor[] = [];
    beforeEach(async () => {
      harness = await makeHarness();
    });
    afterEach(async () => {
      for (const executor of executors.splice(0)) await executor.close();
      await harness.cleanup();
    });
    const create = async (terminationGraceSeconds = 30) => {
      const executor = await harness.create({ terminationGraceSeconds });
      executors.push(executor);
      return executor;
    };

    /** Reconciles until `done` holds for the statuses (level-triggered: repeating is always safe). */
    async function until(
      executor: Executor,
      desired: readonly DesiredJob[],
      done: (statuses: readonly ReplicaStatus[]) => boolean | Promise<boolean>,
      what: string,
    ): Promise<readonly ReplicaStatus[]> {
      const deadline = Date.now() + settleMs;
      for (;;) {
        const statuses = await executor.reconcile(desired);
        if (await done(statuses)) return statuses;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}: ${JSON.stringify(statuses)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const started = async (ref: ReplicaRef) => (await harness.starts(ref)).length > 0;

    // The case modules are called once, before any test: they reach each test's harness through this.
    const current = new Proxy({} as ExecutorHarness, {
      get: (_, key) => Reflect.get(harness, key) as unknown,
    });
    const context: ContractContext = {
      harness: current,
      create,
      until,
      started,
      settleMs,
      options,
    };
    startCases(context);
    stopCases(context);
    outsideCases(context);
    adoptionCases(context);
    logCases(context);
  });
}
