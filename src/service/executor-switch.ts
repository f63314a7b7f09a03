/**
 * A restart with another executor while jobs it ran are active: the new one cannot see the old one's
 * replicas. From local to kubernetes the job's processes ran on, never stopped, while its pods failed to
 * start and used up its restarts (found in review); a job between runs lost its checkpoint folder in the
 * data dir, which pods do not mount. So the start is refused until those jobs have ended.
 */
import type { JobRow } from '../store/repository.ts';
import { ConfigError } from './config.ts';

/** The setting keeping the executor kind the active jobs were started with. */
export const EXECUTOR_KIND_KEY = 'executorKind';

type Kind = 'local' | 'kubernetes';

const WHAT: Record<Kind, string> = {
  local: 'processes on this machine',
  kubernetes: 'pods in the jobs namespace',
};

/** Refuses the start when `kind` differs from `startedWith` and an active job with a workload has run. */
export function checkExecutorSwitch(
  startedWith: Kind | undefined,
  kind: Kind,
  active: readonly Pick<JobRow, 'id' | 'workload' | 'startedAt' | 'state'>[],
): void {
  if (startedWith === undefined || startedWith === kind) return;
  const ran = active.filter((j) => j.workload != null && j.startedAt !== null).map((j) => j.id);
  if (ran.length === 0) return;
  const shown = ran.slice(0, 5).join(', ') + (ran.length > 5 ? ` and ${ran.length - 5} more` : '');
  throw new ConfigError(
    `job${ran.length === 1 ? '' : 's'} ${shown} ran under the ${startedWith} executor (replicas: ` +
      `${WHAT[startedWith]}), and this start sets executor ${kind}, which cannot see them: it would start ` +
      `them again beside replicas still running, or without their checkpoints. Start with executor ` +
      `${startedWith} (--executor, BOA_EXECUTOR) until they have ended (boa jobs cancel ID, or let them ` +
      `end), then with ${kind}`,
  );
}
