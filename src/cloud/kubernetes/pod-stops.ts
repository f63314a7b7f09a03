import type { V1Pod } from '@kubernetes/client-node';
import type { DesiredJob, ReplicaStatus } from '../../service/ports.ts';
import type { PodLogArchive } from './log-archive.ts';
import type { PodIdentity } from './names.ts';
import { containerEnded, replicaStatusOf } from './pods.ts';

/** What a pass stops: the steps, and what it must report as it saw it. */
export interface PodStopPlan {
  readonly tasks: (() => Promise<void>)[];
  /** Pods that had ended on their own before this pass deleted them: reported as they ended. */
  readonly endedBeforeDeletion: ReplicaStatus[];
  /** Ranks that finished on their own, reported by this pass and deleted by a later one. */
  readonly finishedNow: string[];
}

/**
 * Stopping what should not run (other generations, jobs no longer desired, replicas on the wrong node),
 * each pod's log kept before it goes; an ended pod's kept as soon as it is seen ended, whether boa
 * deletes it or not (see plan). A rank that finished on its own is deleted only at the pass after
 * the one that reported it: a pass that fails, or a service that stops before it reads the statuses,
 * would lose it with the pod, and the job would run again.
 */
export class PodStops {
  private readonly reportedFinished = new Set<string>();

  constructor(
    private readonly archive: PodLogArchive,
    private readonly deps: {
      /** Whether the pod belongs to its job as desired now. */
      readonly belongs: (pod: V1Pod, id: PodIdentity, job: DesiredJob | undefined) => boolean;
      /** An ended pod kept for its log while its job runs nothing. */
      readonly kept: (pod: V1Pod) => boolean;
      readonly deletePod: (pod: V1Pod) => Promise<void>;
    },
  ) {}

  plan(
    byJob: ReadonlyMap<number, readonly { pod: V1Pod; id: PodIdentity }[]>,
    want: ReadonlyMap<number, DesiredJob>,
  ): PodStopPlan {
    const tasks: (() => Promise<void>)[] = [];
    const endedBeforeDeletion: ReplicaStatus[] = [];
    const finishedNow: string[] = [];
    for (const [jobId, owned] of byJob) {
      for (const { pod, id } of owned) {
        const name = pod.metadata?.name ?? '';
        if (pod.metadata?.deletionTimestamp) {
          // Stopping, its log not kept: deleted by someone else, or boa restarted while it stopped.
          if (this.archive.has(pod)) continue;
          const phase = pod.status?.phase;
          const ended = phase === 'Succeeded' || phase === 'Failed';
          tasks.push(() => (ended ? this.archive.keepEnded(pod) : this.archive.keepStopping(pod)));
          continue;
        }
        if (!this.deps.belongs(pod, id, want.get(jobId))) {
          const status = replicaStatusOf(pod);
          const ended = status && (status.phase === 'succeeded' || status.phase === 'failed');
          // Kept for its log while its job runs nothing (a restart's backoff, or failed for good): the
          // log says why it failed. A job's next generation still starts only once it is gone.
          const kept = ended && !want.has(jobId) && this.deps.kept(pod);
          if (!kept) {
            if (ended && !status.interrupted) endedBeforeDeletion.push(status);
            if (status?.phase === 'succeeded' && !status.interrupted && !this.reportedFinished.has(name)) {
              finishedNow.push(name);
            } else {
              this.reportedFinished.delete(name);
              // Its log first: the pod takes it along (an ended one's read, a running one's followed).
              tasks.push(async () => {
                await (ended ? this.archive.keepEnded(pod) : this.archive.keepStopping(pod));
                await this.deps.deletePod(pod);
              });
              continue;
            }
          }
        }
        // An ended pod's log is whole, and kept now: its node can go before boa deletes the pod (an
        // idle node is scaled in, ended pods holding none; a node dies), taking the log (found in
        // review: a failed job's log was lost once its node was scaled in). Read once (keptWhole).
        if (containerEnded(pod) && !this.archive.keptWhole(pod))
          tasks.push(() => this.archive.keepEnded(pod));
      }
    }
    return { tasks, endedBeforeDeletion, finishedNow };
  }

  /** The pass that planned `finishedNow` returned their statuses: the next deletes them. */
  reported(finishedNow: readonly string[]): void {
    for (const name of finishedNow) this.reportedFinished.add(name);
    // Bounded: a name not deleted after its report (its pod gone meanwhile) goes with the oldest.
    for (const name of this.reportedFinished) {
      if (this.reportedFinished.size <= 10_000) break;
      this.reportedFinished.delete(name);
    }
  }
}
