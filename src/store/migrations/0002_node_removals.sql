CREATE TABLE `node_removals` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`node_id` text NOT NULL,
	`node_name` text,
	`reason` text NOT NULL,
	`state` text NOT NULL,
	`chosen_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`terminated_at` integer,
	`outcome` text,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `node_removals_state` ON `node_removals` (`state`);