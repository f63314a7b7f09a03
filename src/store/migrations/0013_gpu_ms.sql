ALTER TABLE `jobs` ADD `gpu_ms` real;--> statement-breakpoint
ALTER TABLE `jobs` ADD `gpu_ms_since` integer;
-- Jobs from before these columns read null: their GPU-time before it was not kept, so none is shown
-- rather than a part of it. Jobs submitted since start at 0.
