import { backWithinBudget } from '../core/back-within-budget.ts';
import { isBilled, knownPaidGpus } from './paid-now.ts';
import type { BoaService } from './service.ts';
import { promisedValues } from './budget.ts';

const HOUR = 3_600_000;

/**
 * When the window's paid average is back within its budget if the GPUs paid now stay paid and the
 * budget stays as it is (core/back-within-budget.ts): null while within it or with no budget; `at`
 * null when the rate now is itself above the budget.
 */
export function backWithinBudgetView(
  service: BoaService,
  now: number,
): { at: string | null; paidGpusNow: number } | null {
  const { state, deps } = service;
  const budget = state.budget;
  if (!budget) return null;
  const windowMs = deps.config.budgetWindowHours * HOUR;
  const floor = state.ledgerSince;
  const from = Math.max(now - windowMs, floor);
  // The ledger's nodes, open ones paid until now, as the window's paid average reads them.
  const paid = deps.repo.ledger
    .paidSpansSince(from)
    .map((s) => ({ start: s.launchedAt, end: Math.min(s.goneAt ?? now, now), gpus: s.gpus }));
  const budgets = promisedValues(budget);
  // Over or within is the window's paid average's verdict, the ledger's alone: with a booting node
  // counted, a window within its budget read as over beside a paid average that said within (found in
  // review).
  const billedNow = knownPaidGpus(state, deps.repo.ledger);
  const ledger = backWithinBudget({ now, windowMs, floor, paid, budgets, paidNow: billedNow });
  if (ledger.kind === 'within') return null;
  // A node still pending is not in the ledger yet, but once running it is paid from its launch: counted
  // in the time, so its boot is not left out (a little early, or a time where the rate it brings is
  // over the budget).
  const pending = state.nodes.filter((node) => !isBilled(node));
  for (const node of pending)
    paid.push({ start: Math.max(node.launchedAt, from), end: now, gpus: node.gpus });
  const paidNow = billedNow + pending.reduce((sum, node) => sum + node.gpus, 0);
  const result =
    pending.length > 0 ? backWithinBudget({ now, windowMs, floor, paid, budgets, paidNow }) : ledger;
  if (result.kind === 'within') return null;
  return { at: result.kind === 'at' ? new Date(result.at).toISOString() : null, paidGpusNow: paidNow };
}
