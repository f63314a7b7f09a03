import { Worker } from 'node:worker_threads';
import type { PlanValue } from '../../core/evaluate.ts';
import { computePlan, type PlanInputs, type PlanProblem, type PlanResult } from './compute.ts';

/** Where plans are computed: a worker thread in the service, inline in tests and the demo. */
export interface PlanComputer {
  /** `signal`: the plan is no longer wanted (its inputs changed); a computer may end it early. */
  compute(inputs: PlanInputs, signal?: AbortSignal): Promise<PlanResult>;
  /**
   * The load's minimum budget (checkBudget) and the frontier, off the service's thread: for the largest
   * profiles they take seconds to a minute. Absent (an inline computer): computed on the caller's thread.
   */
  minimum?(problem: PlanProblem): Promise<number>;
  frontier?(problem: PlanProblem): Promise<PlanValue[]>;
  close(): Promise<void>;
}

export class InlinePlanComputer implements PlanComputer {
  async compute(inputs: PlanInputs): Promise<PlanResult> {
    return computePlan(inputs);
  }
  async close(): Promise<void> {}
}

export interface WorkerPlanComputerOptions {
  /** The worker's script (tests give one that dies or never answers). */
  readonly entry?: URL;
  /**
   * How long one computation may take before its worker is ended and the plan fails (the planner keeps
   * the last plan and tries again: planner.ts). Solves take milliseconds to seconds (bench:calculator).
   */
  readonly timeoutMs?: number;
  /**
   * The worker's heap, MB. A computation that needs more ends its worker alone ("out of memory"), and
   * the planner keeps the last plan; unbounded, it could grow to V8's default heap, which beside the
   * service's own can pass the container's limit (1 GiB on EKS) and take the whole service down.
   */
  readonly maxHeapMb?: number;
}

const DEFAULT_ENTRY = new URL('./worker-entry.mjs', import.meta.url);
const DEFAULT_TIMEOUT_MS = 5 * 60_000;
/** Ample for the solves measured (1000 epochs of 1024 widths: about 100 MB); half the pod's limit. */
const DEFAULT_MAX_HEAP_MB = 512;

type Waiter = { resolve(r: unknown): void; reject(e: Error): void; timer?: NodeJS.Timeout };

/** The worker's tasks (worker.ts), as a timeout names them. */
const TASK_NAMES = {
  plan: 'plan computation',
  minimum: "the load's minimum",
  frontier: 'frontier computation',
};
type Task = keyof typeof TASK_NAMES;

/**
 * One long-lived worker; requests are answered in order, matched by id. A worker that dies (an
 * uncaught error, out of memory) or overruns the timeout fails what it had and is replaced at the
 * next request: a lost worker must not leave the planner waiting forever, never to plan again.
 */
export class WorkerPlanComputer implements PlanComputer {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Waiter>();
  private readonly entry: URL;
  private readonly timeoutMs: number;
  private readonly maxHeapMb: number;
  private closed = false;
  private readonly online = new WeakSet<Worker>();
  /**
   * The classes the worker holds, sent again only when one changes (by identity: class-in-use.ts
   * answers the same profiles until a class or its samples change). A copy of the largest profiles (a
   * million speedup entries) held the service's thread 0.1-0.3 s for every plan, minimum and frontier.
   */
  private sentClasses: PlanProblem['classes'] | undefined;

  constructor(options: WorkerPlanComputerOptions = {}) {
    this.entry = options.entry ?? DEFAULT_ENTRY;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxHeapMb = options.maxHeapMb ?? DEFAULT_MAX_HEAP_MB;
  }

  compute(inputs: PlanInputs, signal?: AbortSignal): Promise<PlanResult> {
    return this.run('plan', inputs, signal);
  }

  minimum(problem: PlanProblem): Promise<number> {
    return this.run('minimum', problem);
  }

  frontier(problem: PlanProblem): Promise<PlanValue[]> {
    return this.run('frontier', problem);
  }

  private run<T>(task: Task, inputs: PlanProblem, signal?: AbortSignal): Promise<T> {
    if (this.closed) return Promise.reject(new Error('plan computer closed'));
    if (signal?.aborted) return Promise.reject(new Error(`${TASK_NAMES[task]} no longer wanted`));
    const worker = this.worker ?? this.spawn();
    const id = this.nextId++;
    // Referenced only while it has work, so an idle worker never keeps the process alive.
    worker.ref();
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = { resolve: resolve as (r: unknown) => void, reject };
      this.pending.set(id, waiter);
      // Timed from when the worker runs: its start (loading the solver) is not the computation's.
      this.whenOnline(worker, () => {
        if (this.pending.get(id) !== waiter) return;
        waiter.timer = setTimeout(() => {
          this.fail(
            worker,
            new Error(`${TASK_NAMES[task]} took over ${this.timeoutMs / 1000} s: worker ended`),
          );
          void worker.terminate();
        }, this.timeoutMs);
        waiter.timer.unref();
      });
      // A computation can only be stopped with its worker (what it had fails with it; it is replaced
      // at the next request): a budget cut's plan must not wait up to the timeout behind a hung one.
      signal?.addEventListener(
        'abort',
        () => {
          if (this.pending.get(id) !== waiter) return;
          this.fail(worker, new Error(`${TASK_NAMES[task]} no longer wanted: worker ended`));
          void worker.terminate();
        },
        { once: true },
      );
      const sameClasses = this.holdsClasses(inputs.classes);
      worker.postMessage({
        id,
        task,
        inputs: sameClasses ? { ...inputs, classes: undefined } : inputs,
        sameClasses,
      });
      this.sentClasses = inputs.classes;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    this.fail(worker, new Error('plan computer closed'));
    await worker.terminate();
  }

  private holdsClasses(classes: PlanProblem['classes'] | undefined): boolean {
    const sent = this.sentClasses;
    return (
      sent !== undefined &&
      classes !== undefined &&
      sent.length === classes.length &&
      classes.every((cls, i) => cls === sent[i])
    );
  }

  private whenOnline(worker: Worker, run: () => void): void {
    if (this.online.has(worker)) run();
    else worker.once('online', run);
  }

  private spawn(): Worker {
    const worker = new Worker(this.entry, { resourceLimits: { maxOldGenerationSizeMb: this.maxHeapMb } });
    this.worker = worker;
    this.sentClasses = undefined;
    worker.once('online', () => this.online.add(worker));
    worker.on('message', (m: { id: number; result?: PlanResult; error?: string; stack?: string }) => {
      const waiter = this.pending.get(m.id);
      if (!waiter) return;
      this.settle(worker, m.id);
      if (m.error !== undefined)
        waiter.reject(Object.assign(new Error(m.error), m.stack ? { stack: m.stack } : {}));
      else waiter.resolve(m.result);
    });
    worker.on('error', (error: Error & { code?: string }) =>
      this.fail(
        worker,
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new Error(
              `plan computation ran out of memory (the worker's heap is at most ${this.maxHeapMb} MB)`,
            )
          : error,
      ),
    );
    worker.on('exit', (code) => this.fail(worker, new Error(`plan worker exited with code ${code}`)));
    worker.unref();
    return worker;
  }

  private settle(worker: Worker, id: number): void {
    clearTimeout(this.pending.get(id)?.timer);
    this.pending.delete(id);
    if (this.pending.size === 0) worker.unref();
  }

  /** Fails everything the worker had and forgets it, so the next request starts a new one. */
  private fail(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    for (const [id, waiter] of this.pending) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
      this.pending.delete(id);
    }
  }
}
