import type { PlanValue } from '../core/evaluate.ts';
import { frontierOf, type PlanProblem } from './calculator/compute.ts';
import { loadKey, loadProblem, queriesOf } from './load-needs.ts';
import type { BoaService } from './service.ts';

/** A frontier as computed: for these estimates, at this time. */
export interface ComputedFrontier {
  readonly estimates: PlanProblem;
  readonly vertices: PlanValue[];
  readonly at: number;
}

/** How long a computed frontier answers while the load's key is unchanged (as the load needs). */
const KEPT_MS = 60_000;

const frontiers = new WeakMap<
  BoaService,
  { kept?: ComputedFrontier & { key: string }; computing?: Promise<ComputedFrontier> }
>();

/**
 * The frontier for the load the plan is made for (the plan's point lies on it, its minimum is the load
 * needs). Computed in the queries' worker: for the largest profiles it takes up to a minute, which
 * the service's thread spent with no tick and no request answered (found in review). Requests while
 * one is computed share it, and a computed one answers for a minute while the load stands, so a
 * request that gave up waiting (the API's 503) finds it when asked again.
 */
export function currentFrontier(svc: BoaService): Promise<ComputedFrontier> {
  const now = svc.deps.clock.now();
  const key = loadKey(svc);
  let memo = frontiers.get(svc);
  if (!memo) frontiers.set(svc, (memo = {}));
  const kept = memo.kept;
  if (kept && kept.key === key && now - kept.at < KEPT_MS) return Promise.resolve(kept);
  if (memo.computing) return memo.computing;
  const estimates = loadProblem(svc, now);
  const computer = queriesOf(svc);
  if (!computer?.frontier) return Promise.resolve({ estimates, vertices: frontierOf(estimates), at: now });
  const state = memo;
  const computing = computer.frontier(estimates).then((vertices) => {
    const computed = { estimates, vertices, at: now };
    state.kept = { ...computed, key };
    return computed;
  });
  state.computing = computing.finally(() => {
    state.computing = undefined;
  });
  // Its failure is the waiting requests' to answer; one that gave up waiting must not leave it unhandled.
  state.computing.catch(() => undefined);
  return state.computing;
}
