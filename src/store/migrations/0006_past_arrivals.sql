CREATE TABLE `history_imports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`digest` text NOT NULL,
	`source` text NOT NULL,
	`observed_from` integer NOT NULL,
	`first_arrival_at` integer NOT NULL,
	`last_arrival_at` integer NOT NULL,
	`arrivals` integer NOT NULL,
	`imported_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `history_imports_digest` ON `history_imports` (`digest`);--> statement-breakpoint
CREATE TABLE `past_arrivals` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`import_id` integer NOT NULL,
	`class_name` text NOT NULL,
	`submitted_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `past_arrivals_submitted` ON `past_arrivals` (`submitted_at`);--> statement-breakpoint
CREATE INDEX `past_arrivals_import` ON `past_arrivals` (`import_id`);