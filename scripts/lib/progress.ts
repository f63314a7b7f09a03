/**
 * Progress on stderr: on a terminal one line redrawn in place; elsewhere (a log file) a line when the
 * count moves, at most every `everyMs`, and one a minute while it does not. The eta is "-" until a
 * step has finished: before, cli-progress printed "0/9 0% eta 0s" every 5 s for minutes (a trial).
 * `tick` may be called from synchronous work (a simulation's ticks, the frontier's points): it draws
 * only when due, so calling it often costs a clock read.
 */
export interface ProgressOptions {
  readonly stream?: NodeJS.WriteStream | { isTTY?: boolean; write(text: string): unknown };
  /** Shortest time between two lines off a terminal when the count moved. */
  readonly everyMs?: number;
  /** Time between two lines off a terminal when the count has not moved. */
  readonly idleMs?: number;
  readonly now?: () => number;
}

export function progressBar(
  label: string,
  total: number,
  enabled = true,
  { stream = process.stderr, everyMs = 5_000, idleMs = 60_000, now = Date.now }: ProgressOptions = {},
): { tick(done: number): void; stop(): void } {
  if (!enabled || total <= 1) return { tick: () => {}, stop: () => {} };
  const tty = stream.isTTY === true;
  const began = now();
  let done = 0;
  // The start counts as drawn: off a terminal, the first line comes when a step finished or a minute on.
  let drawnDone = 0;
  let drawnAt = began;
  const line = (at: number) => {
    const width = 20;
    const filled = Math.round((width * done) / total);
    const elapsed = at - began;
    const eta = done === 0 ? '-' : duration((elapsed / done) * (total - done));
    return (
      `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ` +
      `${Math.floor((100 * done) / total)}% elapsed ${duration(elapsed)} eta ${eta}`
    );
  };
  const draw = (force = false) => {
    const at = now();
    const moved = done !== drawnDone;
    // A terminal's line at most ten times a second: a simulation ticks thousands of times one.
    const due = tty
      ? at - drawnAt >= (moved ? 100 : 1_000)
      : (moved && at - drawnAt >= everyMs) || at - drawnAt >= idleMs;
    if (!force && !due) return;
    stream.write(tty ? `\r${line(at)}\x1b[K` : `${line(at)}\n`);
    drawnDone = done;
    drawnAt = at;
  };
  // For work that leaves the event loop free (compare's workers): lines while no step finishes.
  const timer = setInterval(draw, tty ? 1_000 : everyMs);
  timer.unref();
  // Off a terminal the first line waits its turn: a run of a few seconds leaves a log without one.
  if (tty) draw(true);
  return {
    tick: (count) => {
      done = count;
      draw();
    },
    stop: () => {
      clearInterval(timer);
      if (drawnDone !== done) draw(true);
      if (tty) stream.write('\n');
    },
  };
}

/** 75000 ms as "1m 15s", 4000 as "4s". */
function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m ${s % 60}s`
      : `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}
