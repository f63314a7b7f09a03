/**
 * compare's and simulate's boa variants: `boa@oracle`, `boa@warmupH`, `boa@drainH`, `boa@capM`,
 * `boa@creditH`, `boa@confZ`, `boa@firstdayA`, `boa@riseH`, `boa@demandH`, `boa@bandP`, `boa@lookaheadL`, `boa@fifo`, `boa@overdueH`, `boa@fillK` and `boa@fillqK`, alone
 * or joined with `@` (`boa@cap2@conf2`). Each is a setting of boa's, and the series is labelled with all of them wherever it is shown; oracle rates are an input no other
 * policy and no service has, so their label says so.
 */
import { DEFAULT_SPEND_CEILING } from '../../src/core/spend-ceiling.ts';
import { MAX_FIRST_DAY_ARRIVALS, MAX_RATE_CONFIDENCE } from '../../src/service/estimators.ts';
import type { PolicyOptions } from '../../src/sim/policy.ts';

/** A `--policies` entry with variants that are not boa's: bad input, answered with what there is. */
export class PolicyVariantError extends Error {
  override name = 'PolicyVariantError';
}

interface Variant {
  readonly kind: string;
  readonly options: PolicyOptions;
  /** What the label says of it. */
  readonly says: string;
}

const NUMBER = '(\\d+(?:\\.\\d+)?)';

const PARSERS: ReadonlyArray<{ pattern: RegExp; parse: (value: number) => Variant | undefined }> = [
  {
    pattern: new RegExp(`^warmup${NUMBER}$`),
    parse: (hours) =>
      hours > 0 ? { kind: 'warmup', options: { warmupHours: hours }, says: `warm-up ${hours} h` } : undefined,
  },
  {
    pattern: new RegExp(`^drain${NUMBER}$`),
    parse: (hours) => ({
      kind: 'drain',
      options: { drainAfterHours: hours },
      says: hours > 0 ? `drain after ${hours} h` : 'no drain',
    }),
  },
  {
    pattern: new RegExp(`^cap${NUMBER}$`),
    parse: (multiple) =>
      multiple === 0 || multiple >= 1
        ? {
            kind: 'cap',
            options: { planCapMultiple: multiple },
            says: multiple > 0 ? `plan cap ${multiple}x` : 'no plan cap',
          }
        : undefined,
  },
  {
    pattern: new RegExp(`^credit${NUMBER}$`),
    parse: (hours) => ({
      kind: 'credit',
      options: { creditSpendHours: hours },
      says: hours > 0 ? `credit over ${hours} h` : 'no credit',
    }),
  },
  {
    pattern: new RegExp(`^rise${NUMBER}$`),
    parse: (hours) =>
      hours < 24
        ? {
            kind: 'rise',
            options: { rateRiseHours: hours },
            says: hours > 0 ? `rise over ${hours} h` : 'no rise detection',
          }
        : undefined,
  },
  {
    pattern: new RegExp(`^firstday${NUMBER}$`),
    parse: (arrivals) =>
      arrivals <= MAX_FIRST_DAY_ARRIVALS
        ? {
            kind: 'firstday',
            options: { firstDayArrivals: arrivals },
            says: arrivals > 0 ? `first-day arrivals ${arrivals}` : 'no first-day arrivals',
          }
        : undefined,
  },
  {
    pattern: new RegExp(`^lookahead${NUMBER}$`),
    parse: (hours) =>
      hours >= DEFAULT_SPEND_CEILING.horizonHours && hours < 24
        ? {
            kind: 'lookahead',
            options: { ceilingLookaheadHours: hours },
            says: `ceiling look-ahead ${hours} h`,
          }
        : undefined,
  },
  {
    pattern: new RegExp(`^demand${NUMBER}$`),
    parse: (hours) => ({
      kind: 'demand',
      options: { demandHalfLifeHours: hours },
      says: hours > 0 ? `demand ratio over ${hours} h` : 'no demand ratio',
    }),
  },
  {
    pattern: new RegExp(`^band${NUMBER}$`),
    parse: (percent) =>
      percent < 100
        ? {
            kind: 'band',
            options: { fillBelowBand: percent / 100 },
            says: percent > 0 ? `fill when ${percent}% under` : 'no fill below the band',
          }
        : undefined,
  },
  {
    pattern: new RegExp(`^clear${NUMBER}$`),
    parse: (hours) =>
      hours > 0
        ? {
            kind: 'clear',
            options: { clearHalfLifeHours: hours },
            says: `price floored at the ceiling's clearing price, half-life ${hours} h`,
          }
        : undefined,
  },
  {
    pattern: new RegExp(`^fillq${NUMBER}$`),
    parse: (restarts) => ({
      kind: 'fill',
      options: { quietFillSavedRestarts: restarts },
      says:
        restarts > 0
          ? `idle GPUs filled where they save ${restarts} restarts once arrivals stop`
          : 'idle GPUs filled by the 1.1x rule only, arrivals or not',
    }),
  },
  {
    pattern: new RegExp(`^fill${NUMBER}$`),
    parse: (restarts) =>
      restarts > 0
        ? {
            kind: 'fill',
            options: { fillSavedRestarts: restarts },
            says: `idle GPUs filled where they save ${restarts} restarts`,
          }
        : undefined,
  },
  {
    pattern: new RegExp(`^overdue${NUMBER}$`),
    parse: (hours) =>
      hours > 0
        ? {
            kind: 'overdue',
            options: { queueOverdueHours: hours },
            says: `queue bound ${hours} h`,
          }
        : undefined,
  },
  {
    pattern: new RegExp(`^conf${NUMBER}$`),
    parse: (z) =>
      z <= MAX_RATE_CONFIDENCE
        ? {
            kind: 'conf',
            options: { rateConfidence: z },
            says: z > 0 ? `rate confidence ${z}` : 'no rate confidence',
          }
        : undefined,
  },
];

export const VARIANTS_HELP = `the policy variants are boa@oracle (boa on the trace's own rates), boa@fifo (jobs waiting for the budget start in submission order, not least expected work left first), boa@overdueH (a job waiting H hours goes first, H > 0; 24 by default), boa@warmupH (boa with a warm-up of H hours, H > 0), boa@drainH (the drain after H hours without an arrival, 0: none), boa@capM (the plan cap at M >= 1 times the load's minimum, 0: none), boa@creditH (the window's credit spent over H hours while the load is tight, 0: never), boa@confZ (the load planned at 1 + Z / sqrt(arrivals seen) times its online estimate, Z from 0 to ${MAX_RATE_CONFIDENCE}), boa@firstdayA (until the rate window is full, every class planned with A more arrivals, A from 0 to ${MAX_FIRST_DAY_ARRIVALS}), boa@riseH (rise detection over the last H hours, H below 24, 0: none), boa@demandH (plans narrowed by the demand ratio, allocated over expected, with a half-life of H hours, 0: none), boa@bandP (the running jobs take the budget while the window pays more than P% under it, P below 100, 0: never, the default), boa@fillK (simulator only: idle GPUs of a job's own nodes, on several nodes too, lent to it where that saves at least K restarts of its remaining time, K > 0, instead of the 1.1x gain rule for jobs on one node), boa@fillqK (the same only once no job has arrived for the drain's hours, as the service's quietFillSavedRestarts; 20 by default, 0: the 1.1x rule always), boa@clearH (simulator only: each plan at a price at least the highest clearing price the spend ceiling's narrowing has set, decayed with a half-life of H hours, H > 0) and boa@lookaheadL (the spend ceiling keeps the budget windows ending up to L hours ahead, L from 1, the ceiling before 2026-11-29, to below 24; 3 by default), joined with @ to combine (boa@cap2@conf2); boa-price@ceilingB (boa-price under the service's spend ceiling at a budget of B); pollux-autoscale@freeze (no utility sample while a node boots), pollux-budget@gainG (its controller's gain, G > 0 per hour) and pollux-*@interference (at most one distributed job per node), joined with @ to combine: src/sim/policies/pollux/README.md`;

/**
 * The Pollux policies' variants: `@interference` (at most one distributed job per node, off by default)
 * on any of them, `pollux-autoscale@freeze` (the boot freeze, off by default) and `pollux-budget@gainG`
 * (its controller's gain, G > 0 per hour); undefined when the names are not those.
 */
export function polluxVariant(
  policy: string,
  names: readonly string[],
): { options: PolicyOptions; label: string } | undefined {
  const options: { -readonly [K in keyof PolicyOptions]: PolicyOptions[K] } = {};
  const says: string[] = [];
  for (const name of names) {
    const gain = new RegExp(`^gain${NUMBER}$`).exec(name);
    if (name === 'interference' && options.interferenceAvoidance === undefined) {
      options.interferenceAvoidance = true;
      says.push('interference avoidance');
    } else if (name === 'freeze' && policy === 'pollux-autoscale' && options.bootFreeze === undefined) {
      options.bootFreeze = true;
      says.push('boot freeze');
    } else if (gain && policy === 'pollux-budget' && options.polluxBudgetGainPerHour === undefined) {
      const value = Number(gain[1]);
      if (!(value > 0)) return undefined;
      options.polluxBudgetGainPerHour = value;
      says.push(`gain ${value}`);
    } else {
      return undefined;
    }
  }
  return { options, label: `${policy} (${says.join(', ')})` };
}

/**
 * boa-price's one variant, `boa-price@ceilingB`: the service's spend ceiling at a budget of B, the price
 * unchanged (the knob a comparison sweeps); undefined when the names are not that.
 */
export function boaPriceVariant(
  names: readonly string[],
): { options: PolicyOptions; label: string } | undefined {
  const match = names.length === 1 ? new RegExp(`^ceiling${NUMBER}$`).exec(names[0] as string) : null;
  const budget = Number(match?.[1]);
  if (!match || !(budget > 0)) return undefined;
  return { options: { budget }, label: `boa-price (ceiling at ${budget})` };
}

/** boa's options and label for the variant names after `boa@`; undefined when one is not a variant. */
export function boaVariant(names: readonly string[]): { options: PolicyOptions; label: string } | undefined {
  const variants: Variant[] = [];
  for (const name of names) {
    const variant =
      name === 'oracle'
        ? { kind: 'oracle', options: { rates: 'oracle' as const }, says: 'oracle rates' }
        : name === 'fifo'
          ? { kind: 'fifo', options: { queueOrder: 'submitted' }, says: 'queue in submission order' }
          : parseOne(name);
    if (!variant || variants.some((v) => v.kind === variant.kind)) return undefined;
    variants.push(variant);
  }
  // The confidence bound, first-day arrivals and rise detection apply to online estimates; with the
  // trace's rates they would change nothing.
  const kinds = new Set(variants.map((v) => v.kind));
  const onlineOnly = kinds.has('conf') || kinds.has('rise') || kinds.has('firstday');
  if (variants.length === 0 || (kinds.has('oracle') && onlineOnly)) return undefined;
  return {
    options: Object.assign({}, ...variants.map((v) => v.options)) as PolicyOptions,
    label: `boa (${variants.map((v) => v.says).join(', ')})`,
  };
}

function parseOne(name: string): Variant | undefined {
  for (const { pattern, parse } of PARSERS) {
    const match = pattern.exec(name);
    if (match) return parse(Number(match[1]));
  }
  return undefined;
}
