ALTER TABLE `jobs` ADD `workload` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `token_seed` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `restarts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `jobs` ADD `exit_code` integer;--> statement-breakpoint
ALTER TABLE `jobs` ADD `failure_reason` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `last_seen_at` integer;