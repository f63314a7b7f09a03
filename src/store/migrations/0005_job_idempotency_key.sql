ALTER TABLE `jobs` ADD `idempotency_key` text;--> statement-breakpoint
ALTER TABLE `jobs` ADD `request_fingerprint` text;--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_idempotency_key` ON `jobs` (`idempotency_key`);