import { asc } from 'drizzle-orm';
import { LEDGER_PRUNED_BEFORE, type Repository } from './repository.ts';
import { allocationSamples } from './schema.ts';

/**
 * An oldest allocation sample beginning this long after the first start means older ones were pruned:
 * samples run on from the first tick, and a prune keeps at least 25 hours (a 1-hour window and a day).
 */
const PRUNE_SIGN_MS = 3_600_000;

/**
 * Where the ledger is whole from, as the last prune left it (0: never pruned). A data dir pruned before
 * the prune recorded it (before 2026-12-02) has no record: there, an oldest allocation sample that
 * begins more than PRUNE_SIGN_MS after `startedAt` shows rows before it went, and the ledger is whole
 * from that sample's end (the prune deleted samples ending before its cut, and nodes gone before it),
 * recorded at once. Without this, a window made longer at the upgrade read the pruned hours as nothing
 * paid (found in review).
 */
export function ledgerPrunedBefore(repo: Repository, startedAt: number, now: number): number {
  const stored = repo.getSetting<number>(LEDGER_PRUNED_BEFORE);
  if (stored !== undefined) return stored;
  const oldest = repo.db
    .select({ from: allocationSamples.from, to: allocationSamples.to })
    .from(allocationSamples)
    .orderBy(asc(allocationSamples.from))
    .limit(1)
    .get();
  if (!oldest || oldest.from <= startedAt + PRUNE_SIGN_MS) return 0;
  repo.putSetting(LEDGER_PRUNED_BEFORE, oldest.to, now);
  return oldest.to;
}
