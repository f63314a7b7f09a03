/**
 * When a registration compares the load with the plan's (replanIfRatesMoved). A comparison reads every
 * submission of the window and every active job, so one after each registration made a burst quadratic:
 * 20,000 jobs registered took 104 s, the last ones 5 ms each. Up to 1,000 active jobs each registration
 * compares, as before; past that one registration in every active/1,000 does, which spreads a
 * comparison's cost over as many registrations, and the tick compares when registrations came since
 * the last comparison. A move is seen by the next registration that compares or the next tick, which
 * is where widths are given anyway.
 */
import { replanIfRatesMoved } from './plan-inputs.ts';
import type { BoaService } from './service.ts';

/** Active jobs up to which every registration compares; past it, one in every active / this many. */
export const EVERY_REGISTRATION_UP_TO = 1000;

/** Registrations per comparison with `activeJobs` active. */
export function registrationsPerComparison(activeJobs: number): number {
  return Math.max(1, Math.ceil(activeJobs / EVERY_REGISTRATION_UP_TO));
}

/** Counts registrations since the last comparison and compares when due; `compare` is the comparison. */
export class RatesCheck {
  private unchecked = 0;

  constructor(private readonly compare: () => void) {}

  afterRegistration(activeJobs: number): void {
    this.unchecked += 1;
    if (this.unchecked >= registrationsPerComparison(activeJobs)) this.run();
  }

  atTick(): void {
    if (this.unchecked > 0) this.run();
  }

  private run(): void {
    this.unchecked = 0;
    this.compare();
  }
}

const checks = new WeakMap<BoaService, RatesCheck>();

/** The service's RatesCheck, made on first use. */
export function ratesCheckOf(svc: BoaService): RatesCheck {
  let check = checks.get(svc);
  if (!check) checks.set(svc, (check = new RatesCheck(() => replanIfRatesMoved(svc))));
  return check;
}
