-- 0013 left every older job's GPU-time null (not kept). A job that had not started by then (waiting, or
-- cancelled before it ran) had booked no GPUs: its GPU-time is known to be 0, so it starts at 0 and
-- books what it runs from now on, rather than showing "not kept" for a run made wholly after the upgrade.
-- A job starts (started_at set) when it first gets GPUs (scheduler.ts), so started_at null is exact.
UPDATE `jobs` SET `gpu_ms` = 0, `gpu_ms_since` = `submitted_at` WHERE `gpu_ms` IS NULL AND `started_at` IS NULL;
