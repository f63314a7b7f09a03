/**
 * The repository's prepared statements for what runs every tick or every report (the ledger, job
 * state, the last tick): plain SQL prepared once, beside the drizzle queries of the rest.
 */
import type { Db } from './db.ts';

export function prepareHot(db: Db) {
  const c = db.$client;
  return {
    openNodeIds: c.prepare('select id from ledger_nodes where gone_at is null').pluck(),
    openNodeGpus: c.prepare('select coalesce(sum(gpus), 0) from ledger_nodes where gone_at is null').pluck(),
    nodeSpan: c.prepare(
      'select id, gpus, launched_at as launchedAt, gone_at as goneAt from ledger_nodes where id = ?',
    ),
    nodeSpansSince: c.prepare(
      'select id, gpus, launched_at as launchedAt, gone_at as goneAt from ledger_nodes ' +
        'where gone_at is null or gone_at > ?',
    ),
    openNode: c.prepare(
      'insert into ledger_nodes (id, gpus, launched_at, last_seen_at) values (?, ?, ?, ?) ' +
        'on conflict(id) do update set gone_at = null',
    ),
    closeNode: c.prepare('update ledger_nodes set gone_at = ?, last_seen_at = ? where id = ?'),
    // A node no listing showed, charged whole; one the ledger already holds keeps its row.
    chargeNode: c.prepare(
      'insert into ledger_nodes (id, gpus, launched_at, last_seen_at, gone_at) values (?, ?, ?, ?, ?) ' +
        'on conflict(id) do nothing',
    ),
    allocation: c.prepare(
      'insert into allocation_samples (from_ms, to_ms, gpus, expected_gpus, gpus_by_class) values (?, ?, ?, ?, ?)',
    ),
    // Each class's allocated GPU-milliseconds over [from, to]; a sample from before classes were kept
    // has none (null), and its GPUs are the rest of allocatedGpuMs.
    allocatedGpuMsByClass: c.prepare(
      'select c.key as className, sum(c.value * max(0, min(s.to_ms, @to) - max(s.from_ms, @from))) as gpuMs ' +
        'from allocation_samples s, json_each(s.gpus_by_class) c where s.to_ms > @from ' +
        // Samples never overlap: none after the first that ends at or past @to reaches back before it.
        // Bounded so the index range stops there (only the span is read, not the rest of the window).
        'and s.to_ms <= coalesce((select min(to_ms) from allocation_samples where to_ms >= @to), @to) ' +
        'group by c.key',
    ),
    allocationSince: c.prepare(
      'select from_ms as "from", to_ms as "to", gpus, expected_gpus as expectedGpus ' +
        'from allocation_samples where to_ms > ? order by to_ms',
    ),
    lastAllocationTo: c.prepare('select max(to_ms) from allocation_samples').pluck(),
    paidGpuMs: c.prepare(
      'select sum(gpus * max(0, min(coalesce(gone_at, @to), @to) - max(launched_at, @from))) as v ' +
        'from ledger_nodes where coalesce(gone_at, @to) > @from',
    ),
    allocatedGpuMs: c.prepare(
      'select sum(gpus * max(0, min(to_ms, @to) - max(from_ms, @from))) as v ' +
        'from allocation_samples where to_ms > @from',
    ),
    saveJob: c.prepare(
      'update jobs set state = @state, started_at = @startedAt, finished_at = @finishedAt, plan_id = @planId, ' +
        'widths = @widths, stat_epoch = @statEpoch, epoch_started_at = @epochStartedAt, ' +
        'epoch_generation = @epochGeneration, epoch_timed_from_report = @epochTimedFromReport, work_done_seconds = @workDoneSeconds, width = @width, allocation = @allocation, ' +
        'generation = @generation, restarts = @restarts, exit_code = @exitCode, failure_reason = @failureReason, ' +
        'restart_not_before = @restartNotBefore, last_report_at = @lastReportAt, generation_since = @generationSince, ' +
        'idle_fill_gpus = @idleFillGpus, gpu_ms = @gpuMs, gpu_ms_since = @gpuMsSince ' +
        'where id = @id',
    ),
    touchJob: c.prepare('update jobs set last_seen_at = ? where id = ?'),
    setting: c.prepare('select value from settings where key = ?').pluck(),
    putSetting: c.prepare(
      'insert into settings (key, value, updated_at) values (?, ?, ?) ' +
        'on conflict(key) do update set value = excluded.value, updated_at = excluded.updated_at',
    ),
  };
}
