import type { BoaService } from '../../service/service.ts';
import type { BudgetSetting } from '../../service/state.ts';

/**
 * Two PUTs of the budget at once: the first's answer waits for its plan while the second sets its
 * value, so the answer's view shows the second's budget. Said, so an operator who set 40 and reads 60
 * knows another request set it (last write wins) rather than suspecting their own was misread.
 */
export function supersededBy(service: BoaService, set: BudgetSetting): string | null {
  const inForce = service.state.budget;
  if (!inForce || inForce === set) return null;
  return (
    `another request set the budget to ${inForce.gpuHoursPerHour} at ` +
    `${new Date(inForce.setAt).toISOString()}, after this one set ${set.gpuHoursPerHour}: ` +
    'that budget is in force'
  );
}

export function joinWarnings(...warnings: (string | null)[]): string | null {
  const said = warnings.filter((w): w is string => Boolean(w));
  return said.length ? said.join('; ') : null;
}
