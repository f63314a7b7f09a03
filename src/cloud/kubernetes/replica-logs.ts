import type { V1Pod } from '@kubernetes/client-node';
import type { ReplicaLog, ReplicaLogFollow, ReplicaLogQuery } from '../../service/ports.ts';
import { archivedFrom, archivedTail } from './archived-log.ts';
import type { PodLogArchive } from './log-archive.ts';
import { followReplicaLog, type PodLogFollowDeps, startOf } from './log-follow.ts';
import { logGenerations, readPodLog } from './logs.ts';
import { kindOf } from './retry.ts';

/**
 * A replica's log on Kubernetes: its pod's, as `kubectl logs` reads it, while the pod is; then as boa
 * kept it when it deleted the pod (log-archive.ts: every rescale and restart deletes the generation
 * before). Without a generation asked for, that of the newest pod boa owns (the cache's `currentPods`).
 */
export class ReplicaLogs {
  constructor(
    private readonly deps: PodLogFollowDeps,
    private readonly archive: PodLogArchive,
    private readonly currentPods: () => Promise<readonly V1Pod[]>,
  ) {}

  async read(query: ReplicaLogQuery): Promise<ReplicaLog | undefined> {
    const pods = query.generation === undefined ? await this.currentPods() : [];
    const { api, namespace, retry } = this.deps;
    const endedKept = (generation: number) =>
      this.archive.ended({ jobId: query.jobId, generation, rank: query.rank });
    const live = await readPodLog(api, namespace, retry, pods, query, endedKept);
    if (live) return live;
    const kept = this.archive.newest(query.jobId, query.rank, query.generation);
    return kept && { generation: kept.generation, text: archivedTail(kept.stamped, query.tailLines) };
  }

  /** Followed (`kubectl logs -f`, across broken streams: log-follow.ts); a kept one given whole. */
  async follow(query: ReplicaLogQuery, signal: AbortSignal): Promise<ReplicaLogFollow | undefined> {
    const start = startOf(query);
    const pods = query.generation === undefined ? await this.currentPods() : [];
    let live: ReplicaLogFollow | undefined;
    let kept: { generation: number; stamped: string } | undefined;
    try {
      live = await followReplicaLog(this.deps, pods, query, signal);
    } catch (error) {
      // As read does: the newest generation's log kept whole, when the API server cannot give it.
      const generation = query.generation ?? logGenerations(pods, query)[0];
      const kind = kindOf(error);
      const stamped =
        generation !== undefined && (kind === 'transient' || kind === 'throttling')
          ? this.archive.ended({ jobId: query.jobId, generation, rank: query.rank })
          : undefined;
      if (stamped === undefined) throw error;
      kept = { generation: generation!, stamped };
    }
    if (live) return live;
    kept ??= this.archive.newest(query.jobId, query.rank, query.generation);
    if (!kept) return undefined;
    const { text, ...from } = archivedFrom(kept.stamped, start);
    return { generation: kept.generation, ...from, chunks: once(text) };
  }
}

/** A finished log's text as a follow's chunks: it all comes at once, and then it ends. */
async function* once(text: string): AsyncGenerator<string> {
  if (text) yield text;
}
