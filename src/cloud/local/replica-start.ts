// Starting a local replica (its folder, environment, supervisor): apart from the reconcile deciding what starts.
import { mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { ReplicaSpec } from '../../service/ports.ts';
import { makeDefaultCheckpointDir } from './default-checkpoint.ts';
import { generationDir, type PidRecord, readPid, recordFile, writeUrlFile } from './executor-records.ts';
import { LAUNCHER_ENDED, type ReplicaLauncher } from './launcher.ts';
import type { LocalReplica } from './local-replica.ts';
import type { RendezvousPorts } from './rendezvous-ports.ts';
import { heldBackNames, replicaEnv } from './replica-env.ts';
import { claimPidRecord, takePidRecord } from './pid-claim.ts';
import { isOurSupervisor } from './replica-processes.ts';
import { SPAWN_ATTEMPTS, type SpawnFailures } from './spawn-failures.ts';

const SUPERVISOR = resolve(import.meta.dirname, 'replica-supervisor.sh');

/** What a start needs of the LocalExecutor that asks for it. */
export interface ReplicaStartDeps {
  readonly jobsDir: string;
  /** The grace period for the supervisor, which holds the rest of a stopped command's group to it. */
  readonly graceSeconds: string;
  readonly launcher: Pick<ReplicaLauncher, 'launch' | 'close'>;
  readonly spawnFailures: SpawnFailures;
  readonly ports: RendezvousPorts;
  readonly logger: Logger;
  /** Wall-clock milliseconds: what the replica's start is stamped with. */
  readonly now: () => number;
  /** Keeps a job's newest generations' folders: called as its rank 0 starts. */
  readonly pruneGenerations: (jobId: number) => void;
  /** Tracks the replica just launched and writes its pid record. */
  readonly track: (replica: LocalReplica) => void;
}

/** The LocalExecutor's starts of replicas through replica-supervisor.sh, one launch each. */
export class ReplicaStarts {
  private heldBackSaid = false;

  constructor(private readonly deps: ReplicaStartDeps) {}

  /** Once, as the first replica starts: what of the service's environment no job inherits, by name. */
  private sayHeldBack(): void {
    if (this.heldBackSaid) return;
    this.heldBackSaid = true;
    const names = heldBackNames(process.env);
    if (names.length > 0)
      this.deps.logger.info(
        { event: 'local.env-held-back', names },
        "these variables of the service's environment are not passed to jobs; give a job one it needs with --env",
      );
  }

  /**
   * Starts a replica; never throws, so one replica that cannot start (a full disk) stops no other job's
   * statuses: a failure before its launch counts as a failed start (reported failed after a few).
   */
  async start(spec: ReplicaSpec): Promise<void> {
    try {
      await this.launch(spec);
    } catch (error) {
      this.spawnFailed(spec, `preparing its start failed: ${(error as Error).message}`);
    }
  }

  private spawnFailed(spec: ReplicaSpec, error: string): void {
    const lost = error.startsWith(LAUNCHER_ENDED);
    const attempts = this.deps.spawnFailures.failed(spec, error, lost);
    this.deps.logger.error(
      { event: 'replica_spawn_failed', jobId: spec.jobId, generation: spec.generation, attempts, error },
      attempts >= SPAWN_ATTEMPTS
        ? 'could not start supervisor: reported failed'
        : 'could not start supervisor',
    );
  }

  private adoptStarted(spec: ReplicaSpec, dir: string, found: PidRecord): void {
    this.deps.spawnFailures.started(spec);
    const { jobId, generation, rank, node } = spec;
    // No `launched`: its liveness is checked by pid, as an adopted one's (local-replica.ts).
    const replica: LocalReplica = {
      jobId,
      generation,
      rank,
      node,
      dir,
      pid: found.pid,
      startedAt: found.startedAt,
      boaUrl: spec.env.BOA_URL,
      alive: true,
      killed: false,
      owned: true,
    };
    this.deps.track(replica);
    this.deps.logger.warn(
      { event: 'replica_adopted', jobId, generation, rank, pid: found.pid },
      'replica found running although its start was reported failed: tracked, not started again',
    );
  }

  private async launch(spec: ReplicaSpec): Promise<void> {
    const dir = generationDir(this.deps.jobsDir, spec.jobId, spec.generation);
    // Owner only: jobs' logs often hold credentials, and the data dir may have been made 755 by hand.
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (spec.rank === 0) this.deps.pruneGenerations(spec.jobId);
    // Kept with the generation, so ranks started after a restart of the service get the same port.
    const port = Number(spec.env.MASTER_PORT);
    if (Number.isInteger(port) && port > 0) this.deps.ports.record(spec.jobId, spec.generation, dir, port);
    // A start reported failed whose supervisor runs all the same (its launcher killed before it answered):
    // tracked as this replica, not a second one started beside it.
    const found = readPid(dir, spec.rank);
    if (found && isOurSupervisor(found.pid, dir, spec.rank)) {
      this.adoptStarted(spec, dir, found);
      return;
    }
    // A start whose answer was lost may have a supervisor that has not written its record yet: launched
    // again now, two copies ran. Waited for (adopted above once written), then launched.
    if (found === undefined && this.deps.spawnFailures.awaitingRecord(spec)) return;
    // Any other record is an earlier start's (its pid gone or reused): the supervisor keeps a record it
    // finds, so one left here would name another process until boa writes this one's (lost if boa dies).
    // Taken, not removed: one a lost start's supervisor linked in since the read above is that replica.
    const taken = takePidRecord(dir, spec.rank);
    if (taken && taken.pid !== found?.pid && isOurSupervisor(taken.pid, dir, spec.rank)) {
      claimPidRecord(dir, spec.rank, taken);
      this.adoptStarted(spec, dir, taken);
      return;
    }
    rmSync(recordFile(dir, spec.rank, 'exit'), { force: true });
    // Launched on purpose: a lost start's marker must not end this one (lost-start-strays.ts).
    rmSync(recordFile(dir, spec.rank, 'abandoned'), { force: true });
    const { workload } = spec;
    // Where boa is now, which a restart at another address rewrites (adopted-url.ts): BOA_URL is fixed
    // for the process's life, and boa's job clients re-read this file when BOA_URL stops answering.
    const boaEnv: Record<string, string> = { ...spec.env };
    // No --checkpoint: the job's own folder, made before its process starts (default-checkpoint.ts);
    // but a job given `--env BOA_CHECKPOINT_DIR=...` keeps its own, as before 2026-12-01 and as on
    // Kubernetes (found in review: it was silently replaced).
    if (boaEnv.BOA_CHECKPOINT_DIR === undefined && workload.env?.BOA_CHECKPOINT_DIR === undefined)
      boaEnv.BOA_CHECKPOINT_DIR = makeDefaultCheckpointDir(this.deps.jobsDir, spec.jobId);
    if (spec.env.BOA_URL !== undefined) {
      writeUrlFile(dir, spec.rank, spec.env.BOA_URL);
      boaEnv.BOA_URL_FILE = recordFile(dir, spec.rank, 'url');
    }
    const env = replicaEnv(process.env, workload.env, boaEnv);
    this.sayHeldBack();
    const launched = await this.deps.launcher.launch(
      '/bin/sh',
      [
        SUPERVISOR,
        dir,
        String(spec.rank),
        spec.node,
        this.deps.graceSeconds,
        resolve(workload.workingDir ?? '.'),
        '--',
        ...workload.command,
        ...(workload.args ?? []),
      ],
      // The supervisor enters the working directory: a missing one is its recorded exit, not a spawn error.
      { cwd: '/', env },
    );
    if (typeof launched === 'string') {
      // Nothing recorded (the launcher gone, no processes left): the next reconcile tries again, a few times.
      this.spawnFailed(spec, launched);
      return;
    }
    const startedAt = this.deps.now();
    // A lost start's supervisor, held up past the wait for its record, may have claimed the replica
    // first: this launch's supervisor then ends by itself, running nothing, and that one is tracked.
    const record = { pid: launched.pid, node: spec.node, startedAt, boaUrl: spec.env.BOA_URL };
    const first = claimPidRecord(dir, spec.rank, record);
    if (first && isOurSupervisor(first.pid, dir, spec.rank)) {
      this.adoptStarted(spec, dir, first);
      return;
    }
    this.deps.spawnFailures.started(spec);
    // Tracked before anything else can fail: a replica running untracked would be started again.
    const replica: LocalReplica = {
      jobId: spec.jobId,
      generation: spec.generation,
      rank: spec.rank,
      node: spec.node,
      dir,
      pid: launched.pid,
      startedAt,
      boaUrl: spec.env.BOA_URL,
      launched,
      alive: true,
      killed: false,
      owned: true,
    };
    this.deps.track(replica);
    this.deps.logger.info(
      {
        event: 'replica_started',
        jobId: spec.jobId,
        generation: spec.generation,
        rank: spec.rank,
        pid: launched.pid,
      },
      'replica started',
    );
  }
}
