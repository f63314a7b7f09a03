import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

const LAUNCHER = resolve(import.meta.dirname, 'replica-launcher.mjs');

/** A process the launcher started: its exit is reported, unless the launcher itself is gone. */
export interface Launched {
  readonly pid: number;
  /** Ended (and reaped by the launcher). */
  exited: boolean;
  /** The launcher ended first: nobody reports this one's exit; check its pid instead. */
  orphaned: boolean;
}

type Answer = { id: number; pid?: number; error?: string } | { exited: number };

/**
 * How a launch answered by the launcher's end begins: unlike an error the launcher sent, the process
 * may have been spawned all the same (its answer lost with the launcher).
 */
export const LAUNCHER_ENDED = 'replica launcher ended';

/**
 * The service's side of replica-launcher.mjs: a small helper process that spawns replicas, so the
 * service's own (large) heap is never forked. Started at the first launch, again if it ever ends.
 */
export class ReplicaLauncher {
  private child: ChildProcess | null = null;
  private readonly pending = new Map<number, (launched: Launched | string) => void>();
  private readonly live = new Map<number, Launched>();
  private nextId = 1;

  /** Starts `file args` detached in its own process group; the launcher's error message if it could not. */
  launch(
    file: string,
    args: readonly string[],
    options: { cwd: string; env: Record<string, string> },
  ): Promise<Launched | string> {
    const child = this.child ?? this.open();
    const id = this.nextId++;
    return new Promise((answer) => {
      this.pending.set(id, answer);
      // Waiting for an answer keeps the process alive; an idle launcher does not.
      (child.stdout as Socket | null)?.ref();
      child.stdin?.write(`${JSON.stringify({ id, file, args, ...options })}\n`);
    });
  }

  /** Lets the launcher end (what it started runs on); resolves once it has. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    // Held while waiting, so the caller's process stays up until the launcher is gone.
    child.ref();
    let timer: NodeJS.Timeout | undefined;
    const ended = new Promise<void>((done) => child.once('exit', () => done()));
    child.stdin?.end();
    await Promise.race([ended, new Promise((done) => (timer = setTimeout(done, 2000)))]);
    clearTimeout(timer);
  }

  private open(): ChildProcess {
    const child = spawn(process.execPath, [LAUNCHER, String(process.pid)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.child = child;
    child.unref();
    (child.stdin as Socket | null)?.unref();
    child.stdin?.on('error', () => undefined);
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      let message: Answer;
      try {
        message = JSON.parse(line) as Answer;
      } catch {
        return; // not an answer (nothing else writes there)
      }
      this.answer(message);
    });
    const gone = (why: string) => {
      if (this.child !== child) return;
      this.child = null;
      for (const answer of this.pending.values()) answer(`${LAUNCHER_ENDED}: ${why}`);
      this.pending.clear();
      for (const launched of this.live.values()) launched.orphaned = true;
      this.live.clear();
    };
    child.on('error', (error) => gone(error.message));
    child.on('exit', (code, signal) => gone(signal ?? `exit ${code}`));
    return child;
  }

  private answer(message: Answer): void {
    if ('exited' in message) {
      const launched = this.live.get(message.exited);
      if (launched) launched.exited = true;
      this.live.delete(message.exited);
      return;
    }
    const answer = this.pending.get(message.id);
    if (!answer) return;
    this.pending.delete(message.id);
    if (this.pending.size === 0) (this.child?.stdout as Socket | null | undefined)?.unref();
    if (message.pid === undefined) {
      answer(message.error ?? 'not started');
      return;
    }
    const launched: Launched = { pid: message.pid, exited: false, orphaned: false };
    this.live.set(message.pid, launched);
    answer(launched);
  }
}
