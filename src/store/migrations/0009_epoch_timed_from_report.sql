ALTER TABLE `jobs` ADD `epoch_timed_from_report` integer DEFAULT false NOT NULL;--> statement-breakpoint
-- Jobs running before this column: their epoch's clock is kept as it was (a report must not restart it).
UPDATE `jobs` SET `epoch_timed_from_report` = true;
