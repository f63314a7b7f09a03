// Types of boa-job.mjs, for TypeScript training code and boa's own tests.

export declare const FINISHED_STATES: readonly string[];

export interface Allocation {
  jobId: number;
  state: string;
  width: number;
  nodes: { node: string; gpus: number }[];
  generation: number;
  statEpoch: number;
  /** The class's statistical epochs: a report takes statEpoch 0 to statEpochs - 1. */
  statEpochs: number;
}

export interface BoaJobOptions {
  pollSeconds?: number;
  timeoutSeconds?: number;
  /** The timeout of a request started after a SIGTERM (default 2): the grace period is for the checkpoint. */
  sigtermTimeoutSeconds?: number;
  retries?: number;
  backoffSeconds?: number;
  maxBackoffSeconds?: number;
  /**
   * Listen for SIGTERM (default true); close() removes the listener. Until the program first asks
   * (shouldStop, stopReason, waitForWidth), a SIGTERM ends the process as Node's default does.
   */
  handleSigterm?: boolean;
  /** While waitForWidth cannot reach boa (or boa answers 5xx, 429): a console.warn at once, then at
   * most this often (default 60). */
  warnEverySeconds?: number;
}

export declare class BoaError extends Error {}
export declare class BoaConfigError extends BoaError {}
export declare class BoaUnavailable extends BoaError {
  /** Why the last attempt got no answer: ECONNREFUSED, ENOTFOUND, timed out after 10 s, ... */
  readonly reason: string | null;
}
export declare class BoaHTTPError extends BoaError {
  readonly status: number;
  readonly code: string;
  /** boa's own message. */
  readonly detail: string;
  readonly field?: string;
}

export declare class BoaJob {
  constructor(
    options: {
      url: string;
      jobId: number | string;
      token: string;
      generation?: number | null;
      env?: Record<string, string | undefined>;
    } & BoaJobOptions,
  );
  /**
   * From BOA_URL, BOA_JOB_ID, BOA_JOB_TOKEN (BOA_GENERATION if set). With BOA_URL_FILE (boa's local
   * executor sets it), a request boa does not answer re-reads that file and moves to another valid URL
   * it names (boa restarted at another address), with one console.warn; a constructed client never does.
   */
  static fromEnv(env?: Record<string, string | undefined>, options?: BoaJobOptions): BoaJob;
  /** Where boa is: BOA_URL or the url given, or the address BOA_URL_FILE moved it to (fromEnv). */
  readonly url: string;
  readonly jobId: number;
  readonly token: string;
  generation: number | null;
  readonly worldSize: number;
  readonly nnodes: number;
  readonly nodeRank: number;
  readonly nprocPerNode: number;
  /** BOA_FIRST_RANK: global rank of this node's first worker. */
  readonly firstRank: number;
  readonly masterAddr: string;
  readonly masterPort: number;
  /** BOA_CHECKPOINT_DIR; null when the job has none (on Kubernetes without --checkpoint or --checkpoint-claim; a self-launched job). */
  readonly checkpointDir: string | null;
  allocation(): Promise<Allocation>;
  /** The class's statistical epochs (from the last allocation, else asked); null when boa does not say. */
  statEpochs(): Promise<number | null>;
  /**
   * A report boa does not take (boa unreachable, an epoch refused) is warned about and the last
   * allocation seen returned: it never stops training. Rejects only for a refused job (401, 403, 404).
   * A statEpoch boa would refuse (NaN, not an integer, below 0, above the class's last) is not sent, and a
   * workDoneSeconds boa would refuse (NaN, below 0, above 1e9, no number) is left out (warned).
   */
  report(statEpoch: number, workDoneSeconds?: number): Promise<Allocation | Record<string, never>>;
  complete(): Promise<Record<string, unknown>>;
  waitForWidth(timeoutSeconds?: number): Promise<Allocation>;
  shouldStop(): boolean;
  readonly stopReason: string | null;
  readonly lastAllocation: Allocation | null;
  readonly pollError: Error | null;
  startPolling(): this;
  close(): void;
}
