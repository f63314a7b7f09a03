import { describe, expect, it } from 'vitest';
import { type CompareRow, seriesOf } from '../../scripts/lib/compare-report.ts';

const row = (rates: CompareRow['rates'], label?: string) =>
  ({ policy: 'boa', rates, knob: 'budget', ...(label ? { label } : {}) }) as CompareRow;

describe('compare series labels', () => {
  it("labels every boa run that saw the trace's own rates, as rates or as the prior", () => {
    expect(seriesOf(row('online'))).toBe('boa');
    expect(seriesOf(row('oracle'))).toBe('boa (oracle rates)');
    expect(seriesOf(row('prior'))).toBe('boa (oracle prior)');
    expect(seriesOf(row('oracle', 'boa (oracle rates)'))).toBe('boa (oracle rates)');
  });
});
