import type { ServiceJob } from './jobs.ts';
import type { BoaService } from './service.ts';

/**
 * Where a progress report stands among its sender's: `sender` names one client instance (each replica,
 * each process), `number` rises with every report it makes and stays the same when it sends one again.
 */
export interface ReportSequence {
  readonly sender: string;
  readonly number: number;
}

/**
 * Whether boa already took a report from this sender numbered this one or later: this one is then an
 * attempt that arrived late (one the client gave up on, forwarded by a proxy after the newer report) or
 * again (a retry of one taken). Taken, it put the job's work figure back until the next report.
 */
export function overtaken(svc: BoaService, job: ServiceJob, sequence: ReportSequence | undefined): boolean {
  if (sequence === undefined) return false;
  const taken = svc.deps.repo.reportSequences.taken(job.id, sequence.sender);
  if (taken === undefined || sequence.number > taken) return false;
  svc.deps.logger.debug(
    { event: 'report_overtaken', jobId: job.id, sender: sequence.sender, number: sequence.number, taken },
    'progress report older than one taken from its sender: changes nothing',
  );
  return true;
}

/** Notes a report taken (inside the report's transaction). */
export function recordSequence(
  svc: BoaService,
  job: ServiceJob,
  sequence: ReportSequence | undefined,
  now: number,
): void {
  if (sequence !== undefined)
    svc.deps.repo.reportSequences.record(job.id, sequence.sender, sequence.number, now);
}
