// Worker thread: runs the width calculator off the scheduler's thread.
import { parentPort } from 'node:worker_threads';
import { computePlan, type PlanInputs } from './compute.ts';

parentPort?.on('message', (message: { id: number; inputs: PlanInputs }) => {
  try {
    parentPort?.postMessage({ id: message.id, result: computePlan(message.inputs) });
  } catch (error) {
    // The stack too: the planner logs it, and the main thread's own would point at the message port.
    parentPort?.postMessage({
      id: message.id,
      error: (error as Error).message,
      stack: (error as Error).stack,
    });
  }
});
