CREATE TABLE `allocation_samples` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`from_ms` integer NOT NULL,
	`to_ms` integer NOT NULL,
	`gpus` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `allocation_samples_to` ON `allocation_samples` (`to_ms`);--> statement-breakpoint
CREATE TABLE `job_classes` (
	`name` text PRIMARY KEY NOT NULL,
	`profile` text NOT NULL,
	`prior_rate_per_hour` real NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`class_name` text NOT NULL,
	`token_hash` text NOT NULL,
	`state` text NOT NULL,
	`submitted_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	`plan_id` integer,
	`widths` text,
	`stat_epoch` integer DEFAULT 0 NOT NULL,
	`epoch_started_at` integer,
	`epoch_generation` integer DEFAULT 0 NOT NULL,
	`work_done_seconds` real DEFAULT 0 NOT NULL,
	`width` integer DEFAULT 0 NOT NULL,
	`allocation` text NOT NULL,
	`generation` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `jobs_state` ON `jobs` (`state`);--> statement-breakpoint
CREATE INDEX `jobs_class_submitted` ON `jobs` (`class_name`,`submitted_at`);--> statement-breakpoint
CREATE TABLE `ledger_nodes` (
	`id` text PRIMARY KEY NOT NULL,
	`gpus` integer NOT NULL,
	`launched_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`gone_at` integer
);
--> statement-breakpoint
CREATE TABLE `plans` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`computed_at` integer NOT NULL,
	`solver` text NOT NULL,
	`budget` real NOT NULL,
	`planning_budget` real NOT NULL,
	`min_feasible_budget` real NOT NULL,
	`predicted_avg_jct_seconds` real NOT NULL,
	`predicted_gpu_hours_per_hour` real NOT NULL,
	`plan` text NOT NULL,
	`inputs` text NOT NULL,
	`solve_ms` real NOT NULL
);
--> statement-breakpoint
CREATE TABLE `resizes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`target` integer NOT NULL,
	`requested` integer NOT NULL,
	`status` text NOT NULL,
	`update_id` text,
	`error` text
);
--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
