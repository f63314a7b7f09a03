// Worker thread: runs the width calculator off the scheduler's thread.
import { parentPort } from 'node:worker_threads';
import { computePlan, type PlanInputs } from './compute.ts';

parentPort?.on('message', (message: { id: number; inputs: PlanInputs }) => {
  try {
    parentPort?.postMessage({ id: message.id, result: computePlan(message.inputs) });
  } catch (error) {
    parentPort?.postMessage({ id: message.id, error: (error as Error).message });
  }
});
