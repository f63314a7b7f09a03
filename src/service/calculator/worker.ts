// Worker thread: runs the width calculator off the scheduler's thread.
import { parentPort } from 'node:worker_threads';
import { checkBudget, computePlan, frontierOf, type PlanInputs, type PlanProblem } from './compute.ts';

/** What the service asks of the calculator: a plan, the load's minimum budget, or the frontier. */
const TASKS = {
  plan: (inputs: PlanInputs) => computePlan(inputs),
  minimum: (problem: PlanProblem) => checkBudget(problem, 0, false),
  frontier: (problem: PlanProblem) => frontierOf(problem),
};

/** The classes last sent: a message whose classes are unchanged comes without them (computer.ts). */
let heldClasses: PlanInputs['classes'] = [];

type Message = { id: number; task?: keyof typeof TASKS; inputs: PlanInputs; sameClasses?: boolean };

parentPort?.on('message', (message: Message) => {
  try {
    const inputs = message.sameClasses ? { ...message.inputs, classes: heldClasses } : message.inputs;
    heldClasses = inputs.classes;
    const run = TASKS[message.task ?? 'plan'];
    parentPort?.postMessage({ id: message.id, result: run(inputs) });
  } catch (error) {
    // The stack too: the planner logs it, and the main thread's own would point at the message port.
    parentPort?.postMessage({
      id: message.id,
      error: (error as Error).message,
      stack: (error as Error).stack,
    });
  }
});
