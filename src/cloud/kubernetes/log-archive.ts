import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { writeFileDurably } from '../durable-file.ts';
import { KEPT_GENERATIONS, pruneGenerations } from '../job-folders.ts';
import { dirname, join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { NOT_WHOLE } from './archived-log.ts';
import { followPodTail, type PodLogFollowDeps } from './log-follow.ts';
import { withKubeRetry } from './retry.ts';
import { deleteJobFolder, jobsWithFolders } from '../job-folders.ts';
import { identityOf, type PodIdentity } from './names.ts';
import { containerEnded, CONTAINER } from './pods.ts';

/** The most of a pod's log kept once the pod goes: its last MiB (as `boa jobs logs` reads a live one). */
export const ARCHIVE_BYTES = 1 << 20;
/** Lines asked of the API server for an archive: as many as `boa jobs logs --tail` gives. */
const ARCHIVE_LINES = 10_000;
/** Pods followed at once to their last line as they stop; past that, what they wrote so far is kept. */
const MAX_FOLLOWED = 32;

/**
 * A pod's log kept in boa's data folder before boa deletes the pod, which takes the log with it: an
 * ended pod's as it is, a running one's followed through its grace period to its last line (a job saving
 * its checkpoint on SIGTERM says so then). `boa jobs logs` reads a generation whose pod is gone from
 * here: every rescale and restart deletes the pods of the generation before. Kept with the kubelet's
 * stamps (`<jobs>/<job>/<generation>/<rank>.pod.log`), so a follower's cursor finds its place in it.
 */
/** Failed follows or reads of one pod's log before it is given up (see failures). */
const TRIES = 2;

export class PodLogArchive {
  private readonly followed = new Map<
    string,
    { stop: AbortController; done: Promise<void>; jobId: number }
  >();
  /**
   * Pods kept already (by attemptKey, as the maps below), and whether after their container ended (the
   * log whole, never read again): a Terminating pod is seen again until its deletion reaches the cache,
   * an ended one for an hour.
   */
  private readonly kept = new Map<string, boolean>();
  /**
   * Follows and reads that failed, per pod: a pod on a dead node is seen again every pass, and each
   * try waits out the API server's dial to its kubelet. Given up after TRIES (found in review).
   */
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly jobsDir: string | undefined,
    private readonly deps: PodLogFollowDeps & { readonly logger: Logger },
    private readonly followLimitMs: number,
  ) {}

  /**
   * An ended pod's log, read whole (up to its last MiB) and kept, once: not again when kept since its
   * container ended. A failed read is logged, not fatal. (Also a running pod's so far, past MAX_FOLLOWED.)
   */
  async keepEnded(pod: V1Pod): Promise<void> {
    const id = this.identity(pod);
    if (!id || this.keptWhole(pod)) return;
    const name = pod.metadata!.name!;
    const key = attemptKey(pod);
    const { api, namespace, retry } = this.deps;
    const container = CONTAINER;
    try {
      const text = await withKubeRetry(
        'read pod log',
        () =>
          api.readNamespacedPodLog({
            name,
            namespace,
            container,
            timestamps: true,
            tailLines: ARCHIVE_LINES,
          }),
        retry,
      );
      // Fewer lines than asked and within the allowance: the log from its beginning.
      this.write(id, key, text, lineCount(text) < ARCHIVE_LINES, containerEnded(pod));
    } catch (error) {
      this.failed(name, error);
      this.countFailure(key);
    }
  }

  /**
   * Whether the pod's log was kept after its container ended (so it is whole), or given up: known from
   * this run, else from the mark written beside the log (a restarted boa reads no log twice).
   */
  keptWhole(pod: V1Pod): boolean {
    const id = this.identity(pod);
    if (!id) return true;
    const key = attemptKey(pod);
    if (this.kept.get(key) === true || (this.failures.get(key) ?? 0) >= TRIES) return true;
    // Only a pod that ran has the mark, and only one never ran is made again under its name (readmit.ts).
    if (!existsSync(this.endedMark(id))) return false;
    this.remember(key, true);
    return true;
  }

  /**
   * A running pod boa is about to stop: its log followed from now until its container has ended (or
   * `followLimitMs`), then kept. Resolves once it is followed, so its deletion can go ahead.
   */
  async keepStopping(pod: V1Pod): Promise<void> {
    const id = this.identity(pod);
    const name = pod.metadata?.name ?? '';
    const key = attemptKey(pod);
    // Not skipped when it looks Pending: the cache may be behind, and a container not started is
    // waited for by the follow until the pod is gone.
    if (!id || this.followed.has(key)) return;
    if (this.followed.size >= MAX_FOLLOWED) return this.keepEnded(pod);
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(), this.followLimitMs);
    timer.unref();
    try {
      const chunks = await followPodTail(this.deps, name, ARCHIVE_LINES, stop.signal);
      if (!chunks) return clearTimeout(timer);
      const done = (async () => {
        const tail = new TailBuffer(ARCHIVE_BYTES);
        try {
          for await (const chunk of chunks) tail.push(chunk);
        } catch (error) {
          this.failed(name, error);
        }
        // What came is kept even when the stream failed; a full disk is logged, not thrown (no one awaits).
        try {
          this.write(id, key, tail.text(), tail.whole && tail.pushed < ARCHIVE_LINES, false);
        } catch (error) {
          this.failed(name, error);
        }
      })().finally(() => {
        clearTimeout(timer);
        this.followed.delete(key);
      });
      this.followed.set(key, { stop, done, jobId: id.jobId });
    } catch (error) {
      clearTimeout(timer);
      this.failed(name, error);
      this.countFailure(key);
    }
  }

  private countFailure(key: string): void {
    this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
    // Bounded: an old name seen again only costs its tries again.
    if (this.failures.size > 10_000) this.failures.delete(this.failures.keys().next().value!);
  }

  /** Whether a pod's log is kept already (or being followed to be). */
  has(pod: V1Pod): boolean {
    const key = attemptKey(pod);
    return this.followed.has(key) || this.kept.has(key) || (this.failures.get(key) ?? 0) >= TRIES;
  }

  /** The generations of a replica with a kept log, newest first. */
  generations(jobId: number, rank: number): number[] {
    if (!this.jobsDir) return [];
    let names: string[];
    try {
      names = readdirSync(join(this.jobsDir, String(jobId)));
    } catch {
      return [];
    }
    return names
      .filter((g) => /^\d{1,15}$/.test(g) && existsSync(this.file({ jobId, generation: Number(g), rank })))
      .map(Number)
      .sort((a, b) => b - a);
  }

  /** A replica's kept log, stamped as the kubelet gave it; undefined when none is kept. */
  read(id: PodIdentity): string | undefined {
    if (!this.jobsDir) return undefined;
    try {
      return readFileSync(this.file(id), 'utf8');
    } catch {
      return undefined;
    }
  }

  /** A replica's log kept after its container ended (whole, never to change); undefined otherwise. */
  ended(id: PodIdentity): string | undefined {
    if (!this.jobsDir || !existsSync(this.endedMark(id))) return undefined;
    return this.read(id);
  }

  /** The kept log of the generation asked for, else of the newest generation with one. */
  newest(
    jobId: number,
    rank: number,
    generation?: number,
  ): { generation: number; stamped: string } | undefined {
    for (const g of generation !== undefined ? [generation] : this.generations(jobId, rank)) {
      const stamped = this.read({ jobId, generation: g, rank });
      if (stamped !== undefined) return { generation: g, stamped };
    }
    return undefined;
  }

  /** Jobs with a kept log. */
  jobs(): number[] {
    return jobsWithFolders(this.jobsDir);
  }

  /** Deletes a job's kept logs (not while one of its pods is followed to be kept). */
  delete(jobId: number): boolean {
    for (const followed of this.followed.values()) if (followed.jobId === jobId) return false;
    deleteJobFolder(this.jobsDir, jobId);
    return true;
  }

  /** Stops following: what each pod wrote so far is kept. */
  async close(): Promise<void> {
    const pending = [...this.followed.values()];
    for (const { stop } of pending) stop.abort();
    await Promise.all(pending.map(({ done }) => done));
  }

  private identity(pod: V1Pod): PodIdentity | undefined {
    if (!this.jobsDir) return undefined;
    return identityOf(pod.metadata?.labels);
  }

  private file({ jobId, generation, rank }: PodIdentity): string {
    return join(this.jobsDir!, String(jobId), String(generation), `${rank}.pod.log`);
  }

  /** Written after a log kept once its container had ended: that log is whole. */
  private endedMark(id: PodIdentity): string {
    return join(this.jobsDir!, String(id.jobId), String(id.generation), `${id.rank}.pod.ended`);
  }

  /**
   * Written whole or not at all (a crash mid-write leaves the one before). A log without its beginning
   * (`fromStart` false, or cut here) says so in its first line, for readers placing a follower in it.
   * `whole`: read after its container ended; marked so once the log is in place (a crash between
   * leaves it unmarked, read once more).
   */
  private write(id: PodIdentity, key: string, text: string, fromStart: boolean, whole: boolean): void {
    // Nothing written (a pod turned away before it ran): nothing to keep, not an empty log.
    if (text !== '') {
      const file = this.file(id);
      // Owner only, as the local executor's: jobs' logs often hold credentials, and the data dir may
      // have been made 755 by hand (found in review: these were 755 and 644).
      const generationNew = !existsSync(dirname(file));
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      // A generation's first archive: only the job's newest ones are kept (job-folders.ts).
      if (generationNew && this.jobsDir)
        pruneGenerations(this.jobsDir, id.jobId, KEPT_GENERATIONS, (g) => g === id.generation);
      const kept = lastBytes(text, ARCHIVE_BYTES);
      // On disk before the mark that says it is whole (found in review: without the syncs a power loss
      // could keep the mark and lose the log, which no later pass would then read again).
      writeFileDurably(file, fromStart && kept === text ? kept : `${NOT_WHOLE}\n${kept}`);
      if (whole) writeFileDurably(this.endedMark(id), '');
    }
    this.remember(key, whole);
  }

  private remember(key: string, whole: boolean): void {
    this.kept.set(key, whole);
    // Bounded: an old name seen again only costs one more look (or read).
    if (this.kept.size > 10_000) this.kept.delete(this.kept.keys().next().value!);
  }

  private failed(name: string, error: unknown): void {
    this.deps.logger.warn(
      { event: 'kube.log.archive-failed', pod: name, error: String(error) },
      "a pod's log could not be kept",
    );
  }
}

/** The last `limit` bytes of lines as they come, from a line's start. */
class TailBuffer {
  private lines: string[] = [];
  private first = 0;
  private bytes = 0;
  /** Lines pushed, and whether all are still held. */
  pushed = 0;

  constructor(private readonly limit: number) {}

  get whole(): boolean {
    return this.first === 0 && this.pushed === this.lines.length;
  }

  push(line: string): void {
    this.pushed += 1;
    this.lines.push(line);
    this.bytes += Buffer.byteLength(line);
    while (this.bytes > this.limit && this.first < this.lines.length - 1)
      this.bytes -= Buffer.byteLength(this.lines[this.first++]!);
    // Dropped lines are let go now and then, not shifted out one by one.
    if (this.first > 4096) {
      this.lines = this.lines.slice(this.first);
      this.first = 0;
    }
  }

  text(): string {
    return this.lines.slice(this.first).join('');
  }
}

/**
 * One attempt of a pod: its uid. A pod its node turned away is made again under the same name
 * (readmit.ts): keyed by name, an earlier attempt's empty log or failed reads kept a later attempt's
 * log from being kept at all.
 */
const attemptKey = (pod: V1Pod): string => pod.metadata?.uid ?? pod.metadata?.name ?? '';

const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/**
 * The last `limit` bytes of `text`, from a line's start; a last line longer than that (a progress bar
 * redrawn for hours) is kept as its last bytes rather than not at all.
 */
export function lastBytes(text: string, limit: number): string {
  const buffer = Buffer.from(text);
  if (buffer.length <= limit) return text;
  const from = buffer.length - limit;
  if (buffer[from - 1] === 10) return buffer.subarray(from).toString();
  const newline = buffer.indexOf(10, from);
  const lineStart = newline >= 0 && newline < buffer.length - 1 ? newline + 1 : from;
  return buffer.subarray(lineStart).toString();
}
