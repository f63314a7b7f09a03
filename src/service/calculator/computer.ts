import { Worker } from 'node:worker_threads';
import { computePlan, type PlanInputs, type PlanResult } from './compute.ts';

/** Where plans are computed: a worker thread in the service, inline in tests and the demo. */
export interface PlanComputer {
  compute(inputs: PlanInputs): Promise<PlanResult>;
  close(): Promise<void>;
}

export class InlinePlanComputer implements PlanComputer {
  async compute(inputs: PlanInputs): Promise<PlanResult> {
    return computePlan(inputs);
  }
  async close(): Promise<void> {}
}

/** One long-lived worker; requests are answered in order, matched by id. */
export class WorkerPlanComputer implements PlanComputer {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(r: PlanResult): void; reject(e: Error): void }>();

  constructor() {
    this.worker = new Worker(new URL('./worker-entry.mjs', import.meta.url));
    this.worker.on('message', (m: { id: number; result?: PlanResult; error?: string }) => {
      const waiter = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.error !== undefined) waiter?.reject(new Error(m.error));
      else waiter?.resolve(m.result as PlanResult);
    });
    this.worker.on('error', (error) => {
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
    });
    this.worker.unref();
  }

  compute(inputs: PlanInputs): Promise<PlanResult> {
    const id = this.nextId++;
    // Referenced only while it has work, so an idle worker never keeps the process alive.
    this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, inputs });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
