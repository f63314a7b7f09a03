import { SingleBar } from 'cli-progress';

/** A progress bar on stderr; on a non-terminal it prints a line every few seconds instead of redrawing. */
export function progressBar(
  label: string,
  total: number,
  enabled = true,
): { tick(done: number): void; stop(): void } {
  if (!enabled || total <= 1) return { tick: () => {}, stop: () => {} };
  const bar = new SingleBar({
    format: `${label} [{bar}] {value}/{total} {percentage}% eta {eta_formatted}`,
    stream: process.stderr,
    noTTYOutput: true,
    notTTYSchedule: 5000,
    hideCursor: true,
  });
  bar.start(total, 0);
  return { tick: (done) => bar.update(done), stop: () => bar.stop() };
}
