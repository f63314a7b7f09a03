/**
 * Which import a history is: the same content sent again, at any later time, is the import it made,
 * so a client retrying after a timeout gets `alreadyImported` instead of a 409 against its own import.
 */
import { createHash } from 'node:crypto';
import type { HistoryImportRow, PastArrivals } from '../store/history.ts';
import type { PastArrival } from './history.ts';

/**
 * SHA-256 of observedFrom and every arrival sent, sorted: what the request holds, not what the
 * estimator's reach keeps of it at the time, which shrinks as time passes.
 */
export function historyDigest(arrivals: readonly PastArrival[], observedFrom: number): string {
  // Code-unit order, not localeCompare: the digest must not depend on the process's locale.
  const sorted = [...arrivals].sort(
    (a, b) =>
      a.submittedAt - b.submittedAt || (a.className < b.className ? -1 : a.className > b.className ? 1 : 0),
  );
  return digestOf(sorted, observedFrom);
}

/**
 * The import this content made before, if any. Imports stored before the digest covered every arrival
 * sent hold the digest of the arrivals within reach then (sorted by localeCompare): those are found
 * by that digest as long as no arrival has left the reach since. For an import that left nothing out,
 * both digests are the same.
 */
export function findImport(
  history: PastArrivals,
  arrivals: readonly PastArrival[],
  observedFrom: number,
  reachStart: number,
): HistoryImportRow | undefined {
  const found = history.byDigest(historyDigest(arrivals, observedFrom));
  if (found) return found;
  const kept = arrivals
    .filter((a) => a.submittedAt > reachStart)
    .sort((a, b) => a.submittedAt - b.submittedAt || a.className.localeCompare(b.className));
  return kept.length > 0 ? history.byDigest(digestOf(kept, observedFrom)) : undefined;
}

function digestOf(sorted: readonly PastArrival[], observedFrom: number): string {
  const hash = createHash('sha256').update(String(observedFrom));
  for (const a of sorted) hash.update(`\n${a.submittedAt},${a.className}`);
  return hash.digest('hex');
}
