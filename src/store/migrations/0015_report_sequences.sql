CREATE TABLE `report_sequences` (
	`job_id` integer NOT NULL,
	`sender` text NOT NULL,
	`number` integer NOT NULL,
	`taken_at` integer NOT NULL,
	PRIMARY KEY(`job_id`, `sender`)
);
-- Jobs from before it have no sequence taken: a report from any sender is taken as before it.
