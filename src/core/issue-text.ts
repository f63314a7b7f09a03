import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

/** What a length counts, by the kind of value measured. */
const LENGTH_UNIT: Partial<Record<string, string>> = { string: 'character', array: 'item', set: 'item' };

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

/**
 * What follows a field's name in an error: zod's default wording ("Invalid input: expected number,
 * received NaN", "Too small: expected number to be >0") as what the field must be (" must be > 0",
 * " is missing (a number)"); a message a schema wrote itself is kept (": <message>").
 */
export function issueText(issue: Issue): string {
  // A message written to follow the field's name ("must be ...", "given more than once") reads on from it.
  if (/^(must|given) /.test(issue.message)) return ` ${issue.message}`;
  if (!/^(Invalid input|Too small|Too big|Invalid option)/.test(issue.message)) return `: ${issue.message}`;
  if (issue.code === 'invalid_type') {
    const received = /received (-?\w+)$/.exec(issue.message)?.[1];
    // zod's "record" (a map such as a speedup table) is a JSON object to whoever wrote it.
    const expected = issue.expected === 'record' ? 'object' : issue.expected;
    if (received === 'undefined') return ` is missing (${article(expected)})`;
    if (received === 'NaN') return ' must be a number';
    // JSON.parse reads 1e400 as Infinity: too big, where the field's own bound is what to say.
    if (received === 'Infinity' || received === '-Infinity') return ' must be a finite number';
    if (received === 'null') return ` must be ${article(expected)}, not null`;
    // zod calls a fraction where an integer belongs "expected int, received number".
    if (issue.expected === 'int') return ' must be a whole number';
    return ` must be ${article(expected)}${received ? `, not ${article(received)}` : ''}`;
  }
  if ((issue.code === 'too_small' || issue.code === 'too_big') && issue.origin === 'number') {
    const bound = issue.code === 'too_small' ? issue.minimum : issue.maximum;
    const sign = issue.code === 'too_small' ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
    return ` must be ${sign} ${String(bound)}`;
  }
  // A length: zod's "Too small: expected string to have >=1 characters" said as the bound it is.
  if ((issue.code === 'too_small' || issue.code === 'too_big') && LENGTH_UNIT[issue.origin] !== undefined) {
    const unit = LENGTH_UNIT[issue.origin] as string;
    const bound = Number(issue.code === 'too_small' ? issue.minimum : issue.maximum);
    // Lengths are whole: an exclusive bound (z.string().length() is inclusive) is the next one in.
    const limit = issue.inclusive === false ? bound + (issue.code === 'too_small' ? 1 : -1) : bound;
    if (issue.code === 'too_small' && limit === 1 && issue.origin === 'string') return ' must not be empty';
    const verb = issue.origin === 'string' ? 'be' : 'have';
    const side = issue.code === 'too_small' ? 'at least' : 'at most';
    return ` must ${verb} ${side} ${limit} ${unit}${limit === 1 ? '' : 's'}`;
  }
  if (issue.code === 'invalid_value' && issue.values.length > 0)
    return ` must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  return `: ${issue.message}`;
}
