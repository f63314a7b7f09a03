import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { issueText } from '../../src/core/issue-text.ts';

const said = (schema: z.ZodType, value: unknown) => {
  const result = schema.safeParse(value);
  if (result.success) throw new Error(`${JSON.stringify(value)} was taken`);
  return issueText(result.error.issues[0] as z.core.$ZodIssue);
};

describe('issueText', () => {
  it('says what a number field must be, in words', () => {
    expect(said(z.number(), 'x')).toBe(' must be a number, not a string');
    expect(said(z.number(), Number.NaN)).toBe(' must be a number');
    expect(said(z.number().positive(), -1)).toBe(' must be > 0');
  });

  it('says a number too big for JSON (1e400, read as Infinity) must be finite, and null is null', () => {
    expect(said(z.number(), JSON.parse('1e400'))).toBe(' must be a finite number');
    expect(said(z.number(), JSON.parse('-1e400'))).toBe(' must be a finite number');
    expect(said(z.number(), null)).toBe(' must be a number, not null');
    expect(said(z.array(z.string()), null)).toBe(' must be an array, not null');
  });
});
