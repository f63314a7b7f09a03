ALTER TABLE `jobs` ADD `generation_since` integer;
-- Jobs from before this column: when their generation began is unknown (null), so an older
-- generation's exit 0 seen after the upgrade is taken as leaving for the new one, not as finishing:
-- the job runs on from its checkpoint rather than being marked done with its work undone.
