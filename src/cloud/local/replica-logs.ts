import type { ReplicaLog, ReplicaLogFollow, ReplicaLogQuery } from '../../service/ports.ts';
import { generationDir, generationsOf, readExit, readPid, recordFile } from './executor-records.ts';
import type { LocalReplica } from './local-replica.ts';
import { logByteOf } from './log-cursor.ts';
import { followLogFile } from './log-follow.ts';
import { readLogTailAcrossCut } from './log-tail.ts';

/**
 * A local replica's log (`<jobs>/<job>/<generation>/<rank>.log`): its last lines (across a cut by its
 * cap), or followed until the
 * replica has ended, of the generation asked for, else of the newest one with a log.
 */
export class LocalReplicaLogs {
  constructor(
    private readonly jobsDir: string,
    private readonly followPollMs: number,
    /** The replica the executor tracks, if any: whether it still runs. */
    private readonly tracked: (jobId: number, generation: number, rank: number) => LocalReplica | undefined,
  ) {}

  read({ jobId, rank, generation, tailLines }: ReplicaLogQuery): ReplicaLog | undefined {
    for (const g of this.generations(jobId, generation)) {
      const text = readLogTailAcrossCut(
        recordFile(generationDir(this.jobsDir, jobId, g), rank, 'log'),
        tailLines,
      );
      if (text !== undefined) return { generation: g, text };
    }
    return undefined;
  }

  follow(query: ReplicaLogQuery, signal: AbortSignal): ReplicaLogFollow | undefined {
    const { jobId, rank, generation, tailLines } = query;
    // A cursor this executor did not give is the asker's mistake, said even before any log exists.
    if (query.from) logByteOf(query.from);
    for (const g of this.generations(jobId, generation)) {
      const dir = generationDir(this.jobsDir, jobId, g);
      // One being started is not tracked yet, though its supervisor may have begun its log: its pid
      // record says it is there. One forgotten has no records left.
      const ended = () => {
        if (readExit(dir, rank) !== undefined) return true;
        const replica = this.tracked(jobId, g, rank);
        return replica ? !replica.alive : readPid(dir, rank) === undefined;
      };
      const options = { tailLines, from: query.from, pollMs: this.followPollMs, ended, signal };
      const followed = followLogFile(recordFile(dir, rank, 'log'), options);
      if (followed) return { generation: g, ...followed };
    }
    return undefined;
  }

  private generations(jobId: number, generation: number | undefined): number[] {
    return generation !== undefined ? [generation] : generationsOf(this.jobsDir, jobId);
  }
}
