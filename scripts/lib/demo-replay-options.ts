/**
 * What a demo replay was started with, kept in its state: a --state started with other options
 * resumes the run it holds, so a resume with other flags is refused, naming them.
 */
import { createHash } from 'node:crypto';

/** The options a replay was started with, by flag; the trace (after --apps) as a digest of its jobs. */
export type ReplayOptions = Record<string, string | number>;

/** The flags whose value differs, as `--budget 40, not 60`. */
export function changedOptions(was: ReplayOptions, now: ReplayOptions): string[] {
  return Object.keys(now)
    .filter((flag) => flag in was && was[flag] !== now[flag])
    .map((flag) =>
      flag === '--trace/--apps' ? 'another trace or --apps' : `${flag} ${was[flag]}, not ${now[flag]}`,
    );
}

/** A short digest of the replayed jobs (or the imported history): another trace or --apps differs. */
export function digest(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}
