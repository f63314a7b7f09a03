ALTER TABLE `jobs` ADD `idle_fill_gpus` integer DEFAULT 0 NOT NULL;
-- Jobs from before this column: GPUs the idle fill lent them were kept in memory only, so they read 0;
-- a job widened then is placed at its plan's width at the first tick, as before this column.
