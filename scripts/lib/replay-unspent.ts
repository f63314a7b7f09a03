/**
 * Why a replay's service paid less than the budget, tick by tick, as `simulate --unspent` splits a run:
 * each tick's state (core/below-budget.ts) over the GPU-hours the ledger paid until the next tick. The
 * nodes listed at a tick miss those launched after it, which the ledger bills from their launch, so
 * below less above is the ledger's own shortfall.
 */
import { belowBudget, type BelowBudgetInput } from '../../src/core/below-budget.ts';
import { belowBudgetInput } from '../../src/service/below-budget.ts';
import type { BoaService } from '../../src/service/service.ts';
import { UnspentAccount, type UnspentSplit } from '../../src/sim/unspent.ts';

export class ReplayUnspent {
  readonly #account: UnspentAccount;
  /** The last tick's state, from when (replay seconds) it holds. */
  #since: { at: number; input: BelowBudgetInput };

  /** `toMs`: a replay's seconds as the service clock's milliseconds. */
  constructor(
    private readonly service: BoaService,
    budget: number,
    start: number,
    private readonly toMs: (seconds: number) => number,
  ) {
    this.#account = new UnspentAccount(budget, new Map());
    this.#since = { at: start, input: belowBudgetInput(service) };
  }

  /** After the tick at `to`: the interval before it counted, its state held from now. */
  observe(to: number): void {
    this.#countUntil(to);
    this.#since = { at: to, input: belowBudgetInput(this.service) };
  }

  /** GPU-hours below the budget (waiting, usable, nothing could use) and over it, up to `end`. */
  finish(end: number): UnspentSplit {
    this.#countUntil(end);
    return this.#account.finish(end);
  }

  #countUntil(to: number): void {
    const { at, input } = this.#since;
    if (!(to > at)) return;
    const paid = this.service.ledgerAverages(this.toMs(at), this.toMs(to)).paidGpuHoursPerHour;
    this.#account.record(at, paid, belowBudget({ ...input, paidGpus: paid }));
  }
}
