import { BOUNDS, printableName } from '../../src/api/bounds.ts';
import { looksLikeJobId } from '../../src/core/job-ref.ts';
import type { TraceJob } from '../../src/core/trace.ts';
import { UsageError } from './inputs.ts';

const jobName = printableName(BOUNDS.jobName);

/**
 * The demo registers each trace job under its trace name and resumes a replay by those names, so
 * they must be names the service takes, each once: checked before anything runs, not found mid-replay
 * (a repeated name would make a resumed replay take the later job for the earlier one).
 */
export function checkDemoJobNames(jobs: readonly TraceJob[], path: string): void {
  const seen = new Set<string>();
  for (const job of jobs) {
    if (seen.has(job.name)) {
      throw new UsageError(
        `${path}: job name "${job.name}" appears more than once; the demo needs each name once`,
      );
    }
    seen.add(job.name);
    if (looksLikeJobId(job.name)) {
      throw new UsageError(
        `${path}: job name "${job.name}" reads as a job id, which the service refuses as a name: rename it, e.g. ${job.application}-${job.name.trim()}`,
      );
    }
    if (!jobName.safeParse(job.name).success) {
      throw new UsageError(
        `${path}: job name ${JSON.stringify(job.name)} is not one the service takes (printable, 1 to ${BOUNDS.jobName} characters)`,
      );
    }
  }
}
