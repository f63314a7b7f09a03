/** A compare worker: loads the inputs once, then runs the simulations it is sent. */
import { parentPort, workerData } from 'node:worker_threads';
import type { EngineConfig } from '../../src/sim/engine/config.ts';
import { simulate, truthProvider } from '../../src/sim/run.ts';
import type { CompareTask } from './compare-report.ts';
import { loadSimInputs } from './sim-setup.ts';

export interface CompareSetup {
  readonly trace: string;
  readonly apps?: string;
  readonly profiles: string;
  readonly data: string;
  readonly seed: number;
  readonly config: Partial<EngineConfig>;
}

const setup = workerData as CompareSetup;
const inputs = loadSimInputs(setup);
const truthOf = truthProvider(inputs.dataDir);

parentPort?.on('message', ({ index, task }: { index: number; task: CompareTask }) => {
  try {
    const { result } = simulate({
      trace: inputs.trace,
      apps: inputs.apps,
      policy: task.policy,
      options: task.options,
      seed: setup.seed,
      profiles: inputs.profiles,
      truthOf,
      config: setup.config,
    });
    parentPort?.postMessage({ index, result });
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    parentPort?.postMessage({ index, error: { name, message } });
  }
});
