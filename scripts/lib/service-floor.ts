/**
 * A boa budget the service would refuse (below one job's narrowest width on whole nodes), refused by
 * simulate and compare too, by the service's own rule: run anyway, it read as boa's result (a trial
 * ran --budget 1 for 895 hours of queues while the README says the service refuses it).
 */
import type { ProfileFile } from '../../src/core/profile.ts';
import { budgetBelowFloor } from '../../src/service/budget-floor.ts';
import { DEFAULT_ENGINE_CONFIG, type EngineConfig } from '../../src/sim/engine/config.ts';
import { UsageError } from './inputs.ts';

export function refuseBelowServiceFloor(
  budgets: readonly number[],
  profiles: ProfileFile,
  config: Partial<EngineConfig>,
  flag: string,
): void {
  const perNode = config.gpusPerNode ?? DEFAULT_ENGINE_CONFIG.gpusPerNode;
  for (const budget of budgets) {
    const below = budgetBelowFloor(budget, profiles.classes, perNode);
    if (below)
      throw new UsageError(
        `${flag}: boa's ${below.message} The service refuses such a budget, so the simulator does too.`,
      );
  }
}
