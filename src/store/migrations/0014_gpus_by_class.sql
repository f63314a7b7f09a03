ALTER TABLE `allocation_samples` ADD `gpus_by_class` text;
-- Samples from before it read null: their GPUs stay in the ledger's totals, their classes unknown.
