import { describe, expect, it } from 'vitest';
import { type CompareRow, parsePolicyEntry, seriesOf } from '../../scripts/lib/compare-report.ts';
import { findPolicy } from '../../src/sim/policies/index.ts';

const row = (rates: CompareRow['rates'], label?: string) =>
  ({ policy: 'boa', rates, knob: 'budget', ...(label ? { label } : {}) }) as CompareRow;

describe('compare series labels', () => {
  it("labels every boa run that saw the trace's own rates, as rates or as the prior", () => {
    expect(seriesOf(row('online'))).toBe('boa');
    expect(seriesOf(row('oracle'))).toBe('boa (oracle rates)');
    expect(seriesOf(row('prior'))).toBe('boa (oracle prior)');
    expect(seriesOf(row('oracle', 'boa (oracle rates)'))).toBe('boa (oracle rates)');
  });

  it('labels a boa series run with the paper solver (--solver paper), alone or beside a variant', () => {
    const paper = (rates: CompareRow['rates'], label?: string) => ({ ...row(rates, label), solver: 'paper' });
    expect(seriesOf(paper('online'))).toBe('boa (paper solver)');
    expect(seriesOf(paper('oracle'))).toBe('boa (oracle rates, paper solver)');
    expect(seriesOf(paper('online', 'boa (plan cap 2x)'))).toBe('boa (plan cap 2x, paper solver)');
    // Exact is the default: --solver exact is the default series.
    expect(seriesOf({ ...row('online'), solver: 'exact' })).toBe('boa');
  });
});

describe('compare policy variants', () => {
  const find = (name: string) => findPolicy(name);

  it('boa@warmupH is boa with the warm-up as an option, labelled with it', () => {
    const entry = parsePolicyEntry('boa@warmup8', find);
    expect(entry.definition.name).toBe('boa');
    expect(entry.options).toEqual({ warmupHours: 8 });
    expect(entry.label).toBe('boa (warm-up 8 h)');
    expect(parsePolicyEntry('boa@warmup2.5', find).options).toEqual({ warmupHours: 2.5 });
    expect(parsePolicyEntry('boa@oracle', find).label).toBe('boa (oracle rates)');
  });

  it('boa@drainH sets when the drain starts, boa@drain0 turns it off, labelled with it', () => {
    expect(parsePolicyEntry('boa@drain0', find)).toMatchObject({
      options: { drainAfterHours: 0 },
      label: 'boa (no drain)',
    });
    expect(parsePolicyEntry('boa@drain1.5', find)).toMatchObject({
      options: { drainAfterHours: 1.5 },
      label: 'boa (drain after 1.5 h)',
    });
  });

  it('boa-price@ceilingB holds the spend ceiling at a budget of B, its only variant', () => {
    expect(parsePolicyEntry('boa-price@ceiling118.8', find)).toMatchObject({
      definition: { name: 'boa-price' },
      options: { budget: 118.8 },
      label: 'boa-price (ceiling at 118.8)',
    });
    for (const [spec, told] of [
      [
        'boa-price@ceiling0',
        /ceiling0 is not a value boa-price@ceilingB takes \(boa-price under .* budget of B\)/,
      ],
      ['boa-price@cap2', /cap2 is not a variant of boa-price; its variants: ceilingB /],
      ['boa-price@ceiling1@ceiling2', /each variant at most once$/],
      [
        'pollux-autoscale@ceiling5',
        /ceiling5 is not a variant of pollux-autoscale; its variants: freeze, interference /,
      ],
    ] as const)
      expect(() => parsePolicyEntry(spec, find), spec).toThrow(told);
  });

  it('pollux-autoscale@freeze takes no utility sample while a node boots, labelled with it', () => {
    expect(parsePolicyEntry('pollux-autoscale@freeze', find)).toMatchObject({
      definition: { name: 'pollux-autoscale' },
      options: { bootFreeze: true },
      label: 'pollux-autoscale (boot freeze)',
    });
    for (const [spec, told] of [
      [
        'pollux-autoscale@cap2',
        /cap2 is not a variant of pollux-autoscale; its variants: freeze, interference /,
      ],
      ['pollux-autoscale@freeze@freeze', /each variant at most once$/],
      [
        'pollux-budget@freeze',
        /freeze is not a variant of pollux-budget; its variants: gainG, interference /,
      ],
    ] as const)
      expect(() => parsePolicyEntry(spec, find), spec).toThrow(told);
  });

  it('pollux-*@interference and pollux-budget@gainG set their options, labelled with them', () => {
    expect(parsePolicyEntry('pollux-fixed@interference', find)).toMatchObject({
      definition: { name: 'pollux-fixed' },
      options: { interferenceAvoidance: true },
      label: 'pollux-fixed (interference avoidance)',
    });
    expect(parsePolicyEntry('pollux-budget@gain0.5@interference', find)).toMatchObject({
      options: { polluxBudgetGainPerHour: 0.5, interferenceAvoidance: true },
      label: 'pollux-budget (gain 0.5, interference avoidance)',
    });
    for (const [spec, told] of [
      [
        'pollux-budget@gain0',
        /gain0 is not a value pollux-budget@gainG takes \(its controller's gain, G > 0 per hour\)/,
      ],
      [
        'pollux-autoscale@gain1',
        /gain1 is not a variant of pollux-autoscale; its variants: freeze, interference /,
      ],
      ['pollux-fixed@interference@interference', /each variant at most once$/],
    ] as const)
      expect(() => parsePolicyEntry(spec, find), spec).toThrow(told);
  });

  it('boa@capM turns on the plan cap at M times the load minimum, labelled with it', () => {
    expect(parsePolicyEntry('boa@cap2', find)).toMatchObject({
      options: { planCapMultiple: 2 },
      label: 'boa (plan cap 2x)',
    });
    expect(parsePolicyEntry('boa@cap0', find).label).toBe('boa (no plan cap)');
  });

  it("boa@creditH spends the window's credit over H hours while the load is tight, labelled with it", () => {
    expect(parsePolicyEntry('boa@credit8', find)).toMatchObject({
      options: { creditSpendHours: 8 },
      label: 'boa (credit over 8 h)',
    });
    expect(parsePolicyEntry('boa@credit0', find)).toMatchObject({
      options: { creditSpendHours: 0 },
      label: 'boa (no credit)',
    });
  });

  it("boa@demandH narrows plans by the demand ratio (the service's opt-in), labelled with it", () => {
    expect(parsePolicyEntry('boa@demand2', find)).toMatchObject({
      options: { demandHalfLifeHours: 2 },
      label: 'boa (demand ratio over 2 h)',
    });
    expect(parsePolicyEntry('boa@demand0', find).label).toBe('boa (no demand ratio)');
  });

  it("boa@lookaheadL sets the spend ceiling's look-ahead, labelled with it", () => {
    expect(parsePolicyEntry('boa@lookahead1', find)).toMatchObject({
      options: { ceilingLookaheadHours: 1 },
      label: 'boa (ceiling look-ahead 1 h)',
    });
  });

  it('boa@fifo queues jobs for the budget in submission order, labelled with it', () => {
    expect(parsePolicyEntry('boa@fifo', find)).toMatchObject({
      options: { queueOrder: 'submitted' },
      label: 'boa (queue in submission order)',
    });
    expect(parsePolicyEntry('boa@oracle@fifo', find).label).toBe(
      'boa (oracle rates, queue in submission order)',
    );
    expect(parsePolicyEntry('boa@overdue8', find)).toMatchObject({
      options: { queueOverdueHours: 8 },
      label: 'boa (queue bound 8 h)',
    });
    expect(() => parsePolicyEntry('boa@overdue0', find)).toThrow(/boa@overdueH/);
  });

  it('boa@fillK and boa@fillqK fill idle GPUs by time saved, labelled with it', () => {
    expect(parsePolicyEntry('boa@fill20', find)).toMatchObject({
      options: { fillSavedRestarts: 20 },
      label: 'boa (idle GPUs filled where they save 20 restarts)',
    });
    expect(parsePolicyEntry('boa@fillq40', find)).toMatchObject({
      options: { quietFillSavedRestarts: 40 },
      label: 'boa (idle GPUs filled where they save 40 restarts once arrivals stop)',
    });
    // The default's quiet fill off: the 1.1x rule, as boa before 2026-12-02.
    expect(parsePolicyEntry('boa@fillq0', find)).toMatchObject({
      options: { quietFillSavedRestarts: 0 },
      label: 'boa (idle GPUs filled by the 1.1x rule only, arrivals or not)',
    });
    expect(() => parsePolicyEntry('boa@fill0', find)).toThrow(/boa@fillK/);
    expect(() => parsePolicyEntry('boa@fill20@fillq20', find)).toThrow();
  });

  it('boa@bandP fills toward the budget while the window pays P% under it, labelled with it', () => {
    expect(parsePolicyEntry('boa@band1.5', find)).toMatchObject({
      options: { fillBelowBand: 0.015 },
      label: 'boa (fill when 1.5% under)',
    });
    expect(parsePolicyEntry('boa@band0', find)).toMatchObject({
      options: { fillBelowBand: 0 },
      label: 'boa (no fill below the band)',
    });
    expect(() => parsePolicyEntry('boa@band100', find)).toThrow(/boa@bandP/);
  });

  it('boa@confZ plans online rates Z standard errors up, labelled with it', () => {
    expect(parsePolicyEntry('boa@conf2', find)).toMatchObject({
      options: { rateConfidence: 2 },
      label: 'boa (rate confidence 2)',
    });
    expect(parsePolicyEntry('boa@conf0', find).label).toBe('boa (no rate confidence)');
  });

  it('boa@firstdayA plans every class with A more arrivals until the window is full, labelled with it', () => {
    expect(parsePolicyEntry('boa@firstday1', find)).toMatchObject({
      options: { firstDayArrivals: 1 },
      label: 'boa (first-day arrivals 1)',
    });
    expect(parsePolicyEntry('boa@firstday0', find).label).toBe('boa (no first-day arrivals)');
  });

  it('boa@riseH sets rise detection over H hours, boa@rise0 turns it off, labelled with it', () => {
    expect(parsePolicyEntry('boa@rise4', find)).toMatchObject({
      options: { rateRiseHours: 4 },
      label: 'boa (rise over 4 h)',
    });
    expect(parsePolicyEntry('boa@rise0', find).label).toBe('boa (no rise detection)');
  });

  it('joins variants with @, each setting in the options and the label', () => {
    expect(parsePolicyEntry('boa@cap2@conf1.5', find)).toMatchObject({
      options: { planCapMultiple: 2, rateConfidence: 1.5 },
      label: 'boa (plan cap 2x, rate confidence 1.5)',
    });
    expect(parsePolicyEntry('boa@oracle@cap2', find)).toMatchObject({
      options: { rates: 'oracle', planCapMultiple: 2 },
      label: 'boa (oracle rates, plan cap 2x)',
    });
  });

  it('refuses other variants, naming the wrong one and what it takes, or the ones there are', () => {
    const valueOf = (variant: string) => new RegExp(`is not a value boa@${variant} takes \\(.+\\)$`);
    const boaNames = /is not a variant of boa; its variants: oracle, fifo, overdueH, .*, lookaheadL /;
    const once = /each variant at most once, and oracle not with conf, firstday or rise/;
    const cases: Array<[string, RegExp]> = [
      ['boa@warmup', valueOf('warmupH')],
      ['boa@warmup0', valueOf('warmupH')],
      ['boa@fast', boaNames],
      ['lyra@warmup8', /"lyra@warmup8": lyra has no variants/],
      ['boa@oracle@x', boaNames],
      ['boa@drain', valueOf('drainH')],
      ['lyra@drain0', /lyra has no variants/],
      ['boa@cap0.5', valueOf('capM')],
      ['boa@cap', valueOf('capM')],
      ['boa@credit', valueOf('creditH')],
      ['lyra@credit4', /lyra has no variants/],
      ['boa@conf5', valueOf('confZ')],
      ['boa@conf', valueOf('confZ')],
      ['boa@cap2@cap3', once],
      ['boa@oracle@conf2', once],
      ['boa@rise24', valueOf('riseH')],
      ['boa@oracle@rise0', once],
      ['boa@firstday11', valueOf('firstdayA')],
      ['boa@oracle@firstday1', once],
      ['boa@demand', valueOf('demandH')],
      ['boa@demand2@demand3', once],
      ['boa@lookahead0.5', valueOf('lookaheadL')],
      ['boa@lookahead24', valueOf('lookaheadL')],
      ['boa@', /"boa@": a variant name is empty; boa's variants: oracle, fifo, /],
    ];
    for (const [spec, told] of cases) expect(() => parsePolicyEntry(spec, find), spec).toThrow(told);
  });
});
