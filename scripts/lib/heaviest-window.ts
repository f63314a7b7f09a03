/**
 * The most a replay's ledger paid in any full budget window ending at a tick: what the budget promises
 * to hold. Kept in the replay's store, so a resumed replay still counts the windows before it.
 */
import { budgetWindowFloor } from '../../src/service/budget.ts';
import type { BoaService } from '../../src/service/service.ts';

const SETTING = 'replay-heaviest-window';

export class HeaviestWindow {
  readonly #windowMs: number;
  #mostGpuMs: number;

  constructor(private readonly service: BoaService) {
    this.#windowMs = service.deps.config.budgetWindowHours * 3_600_000;
    this.#mostGpuMs = service.deps.repo.getSetting<number>(SETTING) ?? 0;
  }

  /** Counts the window ending now, once one full window has passed since the budget's window began. */
  observe(now: number): void {
    const budget = this.service.state.budget;
    if (!budget || now - budgetWindowFloor(this.service, budget) < this.#windowMs) return;
    const paid = this.service.deps.repo.ledger.paidGpuMs(now - this.#windowMs, now);
    if (paid > this.#mostGpuMs) {
      this.#mostGpuMs = paid;
      this.service.deps.repo.putSetting(SETTING, paid, now);
    }
  }

  /** GPU-hours per hour in the heaviest window; null while none was full. */
  perHour(): number | null {
    return this.#mostGpuMs > 0 ? this.#mostGpuMs / this.#windowMs : null;
  }
}
