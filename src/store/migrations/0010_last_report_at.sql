ALTER TABLE `jobs` ADD `last_report_at` integer;--> statement-breakpoint
-- Jobs from before this column: whether they reported is unknown (nothing recorded it), so every one
-- that ever started or ended counts as having reported, at its submission: none is noted "ended without
-- reporting progress". A waiting job that never started is left null: its reports count from now on.
UPDATE `jobs` SET `last_report_at` = `submitted_at` WHERE `state` <> 'waiting' OR `started_at` IS NOT NULL;
