/**
 * What went wrong since this process started, for /metrics. Served as Prometheus counters: they start
 * at 0 with the process, which rate() and increase() read as a counter reset, so nothing is stored.
 */
export class OpsCounters {
  /** Scheduling ticks that threw (the store not written, a programming error): the log's tick_failed. */
  tickFailures = 0;
  /** Listing or describing the node pool failed (AWS, Kubernetes): the log's pool_unavailable. */
  poolFailures = 0;
  /** A tick's metrics (the Heartbeat among them) not delivered to CloudWatch: the log's metrics_failed. */
  metricsPublishFailures = 0;
  /** Failed runs restarted (each job_restart line); a job out of restarts is counted in boa_jobs{state="failed"}. */
  jobRestarts = 0;
  /** Plan computations that failed (worker died, timed out, answered an unusable plan): plan_failed. */
  planFailures = 0;
}
