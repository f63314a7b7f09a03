/**
 * Arrival history: submissions from before the service's own record, imported so that a new service's
 * rate window starts full instead of empty (`POST /v1/history`, `boa history import`). A fresh service
 * plans its first hours from a few arrivals and counts a rare heavy class only once it has been seen;
 * a service that ran through days like the ones to come plans far better (docs/comparison.md, "after
 * the first day"). A team moving to boa has those days in its old scheduler's job log. The imported
 * arrivals are never run: only the rate estimator reads them, beside the jobs' own submissions, and
 * the hours they cover count as observed.
 */
import type { HistoryImportRow } from '../store/history.ts';
import type { ServiceConfig } from './config.ts';
import { notFound, ServiceError } from './errors.ts';
import { findImport, historyDigest } from './history-digest.ts';
import type { BoaService } from './service.ts';

const HOUR = 3_600_000;

export interface PastArrival {
  readonly className: string;
  /** ms since the epoch */
  readonly submittedAt: number;
}

export interface HistoryInput {
  /** Where it came from (a file name), shown in the listing. */
  readonly source: string;
  readonly arrivals: readonly PastArrival[];
  /** Start of the span the history covers, before its first arrival; default: just before it. */
  readonly observedFrom?: number;
}

export interface HistoryImported {
  readonly import: HistoryImportRow;
  /** The same content was imported before: nothing changed. */
  readonly alreadyImported: boolean;
  /** Arrivals older than any estimate reads, not kept. */
  readonly leftOut: number;
}

/**
 * The most imported arrivals the estimator reads at once (all imports within its reach). The held
 * estimates are computed at each distinct submission instant: the first read after a start or an
 * import takes about 0.6 s at 10,000 instants on the 2-core machine (`npm run -s bench:rates`). 10,000
 * is two days at 200 submissions an hour.
 */
export const MAX_PAST_ARRIVALS = 10_000;

/** How far back an estimate reads: the rate window, and the window before it for the held estimates. */
export function historyReachMs(config: Pick<ServiceConfig, 'rateWindowHours'>): number {
  return 2 * config.rateWindowHours * HOUR;
}

/** Stores a history (one transaction) and re-plans; the same content twice is one import. */
export function importHistory(svc: BoaService, input: HistoryInput): HistoryImported {
  const { repo, clock, config, logger } = svc.deps;
  const now = clock.now();
  // A loop, not Math.min(...): an import may hold more arrivals than a call takes arguments.
  const first = input.arrivals.reduce((least, a) => Math.min(least, a.submittedAt), Number.POSITIVE_INFINITY);
  const observedFrom = input.observedFrom ?? first - 1;
  const reachStart = now - historyReachMs(config);
  // Before the checks that depend on the time or the classes: a retry is the import it made.
  const before = findImport(repo.history, input.arrivals, observedFrom, reachStart);
  if (before) {
    return { import: before, alreadyImported: true, leftOut: input.arrivals.length - before.arrivals };
  }
  checkClasses(svc, input.arrivals);
  const recordStart = svc.state.startedAt;
  const late = input.arrivals.findIndex((a) => a.submittedAt >= recordStart);
  if (late >= 0) {
    throw new ServiceError(
      422,
      'invalid',
      `arrivals[${late}].submittedAt ${iso(input.arrivals[late]?.submittedAt ?? 0)} is not before the ` +
        `service's own record began (${iso(recordStart)}); its submissions from then are counted already, ` +
        'so a history must end before it',
      `arrivals[${late}].submittedAt`,
    );
  }
  if (observedFrom >= first) {
    throw new ServiceError(
      422,
      'invalid',
      `observedFrom ${iso(observedFrom)} must be before the first arrival (${iso(first)})`,
      'observedFrom',
    );
  }
  const kept = input.arrivals
    .filter((a) => a.submittedAt > reachStart)
    .sort((a, b) => a.submittedAt - b.submittedAt || a.className.localeCompare(b.className));
  if (kept.length === 0) {
    throw new ServiceError(
      422,
      'invalid',
      `all ${input.arrivals.length} arrivals are older than the rate estimator reads (2 x rateWindowHours ` +
        `= ${2 * config.rateWindowHours} hours, since ${iso(reachStart)}); nothing to import`,
      'arrivals',
    );
  }
  const digest = historyDigest(input.arrivals, observedFrom);
  const leftOut = input.arrivals.length - kept.length;
  const saved = repo.transaction(() => {
    const held = repo.history.countSince(reachStart);
    if (held + kept.length > MAX_PAST_ARRIVALS) {
      throw new ServiceError(
        422,
        'too_many_arrivals',
        `${kept.length} arrivals within the estimator's reach, beside the ${held} imported before, are over ` +
          `the ${MAX_PAST_ARRIVALS} it keeps: import fewer days (the estimator reads the last ` +
          `${2 * config.rateWindowHours} hours), or delete an import first`,
        'arrivals',
      );
    }
    const span = { observedFrom, lastArrivalAt: (kept[kept.length - 1] as PastArrival).submittedAt };
    const overlap = repo.history.imports().find((i) => overlaps(i, span));
    if (overlap) {
      throw new ServiceError(
        409,
        'history_overlaps',
        `the history's span ${iso(span.observedFrom)} to ${iso(span.lastArrivalAt)} overlaps import ` +
          `${overlap.id} ("${overlap.source}", ${iso(overlap.observedFrom)} to ${iso(overlap.lastArrivalAt)}); ` +
          'its arrivals would be counted twice: delete that import first, or import a history that ends before it',
        'arrivals',
        { importId: overlap.id },
      );
    }
    return repo.history.insert(
      {
        digest,
        source: input.source,
        observedFrom,
        firstArrivalAt: (kept[0] as PastArrival).submittedAt,
        lastArrivalAt: span.lastArrivalAt,
        importedAt: now,
      },
      kept,
    );
  });
  loadHistory(svc);
  logger.info(
    { event: 'history_imported', id: saved.id, arrivals: kept.length, leftOut },
    'arrival history imported',
  );
  void svc.planner.request('history');
  return { import: saved, alreadyImported: false, leftOut };
}

/** Removes an import: the estimator no longer reads its arrivals. */
export function deleteHistory(svc: BoaService, id: number): HistoryImportRow {
  const { repo, logger } = svc.deps;
  const row = repo.transaction(() => {
    const found = repo.history.imports().find((i) => i.id === id);
    if (!found || !repo.history.delete(id)) throw notFound(`history import ${id}`);
    return found;
  });
  loadHistory(svc);
  logger.info({ event: 'history_deleted', id }, 'arrival history deleted');
  void svc.planner.request('history');
  return row;
}

/**
 * Reads the imports into the state: where the estimator's observation starts (the service's start, or
 * the earliest import's span), and a key that changes with every import, for the estimates' caches.
 */
export function loadHistory(svc: BoaService): void {
  const imports = svc.deps.repo.history.imports();
  svc.state.ratesObservedSince = Math.min(svc.state.startedAt, ...imports.map((i) => i.observedFrom));
  svc.state.historyKey = imports.map((i) => i.id).join(',');
}

function checkClasses(svc: BoaService, arrivals: readonly PastArrival[]): void {
  const known = svc.state.classes;
  const unknown = [...new Set(arrivals.map((a) => a.className).filter((name) => !known.has(name)))];
  if (unknown.length === 0) return;
  const index = arrivals.findIndex((a) => !known.has(a.className));
  throw new ServiceError(
    422,
    'unknown_class',
    `arrivals name class(es) the service does not have: ${unknown.slice(0, 5).join(', ')}` +
      `${unknown.length > 5 ? ', ...' : ''}; its classes are ${[...known.keys()].sort().join(', ')} ` +
      "(add one with PUT /v1/classes/{name}, or leave those arrivals out: 'boa history import --known-classes')",
    `arrivals[${index}].className`,
  );
}

function overlaps(row: HistoryImportRow, span: { observedFrom: number; lastArrivalAt: number }): boolean {
  return row.observedFrom < span.lastArrivalAt && span.observedFrom < row.lastArrivalAt;
}

const iso = (ms: number) => new Date(ms).toISOString();
