/**
 * fast-check arbitraries read off zod schemas: mostly values the schema describes (bounds included
 * and just past them), mixed with hostile ones (wrong types, huge numbers, control characters, extra
 * keys), so a fuzz run exercises both the accepted and the refused paths of every route.
 */
import fc from 'fast-check';
import type { z } from 'zod';

type Any = z.ZodType & { _zod: { def: Record<string, any> } } & Record<string, any>;

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\nb',
  '\u001b[31m',
  '\u202e',
  'x'.repeat(5000),
  '../..',
  '%00',
  '{}',
];

/** Anything JSON can carry, hostile strings among it. */
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1e308, -1e308, 5e-324, 2 ** 53, [], {}),
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.jsonValue({ maxDepth: 2 }),
);

function numberArb(schema: Any): fc.Arbitrary<unknown> {
  const min = Number.isFinite(schema.minValue) ? (schema.minValue as number) : -1e6;
  const max = Number.isFinite(schema.maxValue) ? (schema.maxValue as number) : 1e6;
  const inRange = schema.isInt
    ? fc.integer({ min: Math.max(Math.ceil(min), -(2 ** 31)), max: Math.min(Math.floor(max), 2 ** 31 - 1) })
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  const edges = fc.constantFrom(min, max, max + 1, max * 10, min - 1, min + 0.5, 0);
  return fc.oneof(
    { arbitrary: inRange, weight: 6 },
    { arbitrary: edges, weight: 2 },
    { arbitrary: hostile, weight: 1 },
  );
}

function stringArb(schema: Any): fc.Arbitrary<unknown> {
  const checks = (schema._zod.def.checks ?? []).map((c: any) => c._zod.def);
  const regex = checks.find((c: any) => c.format === 'regex')?.pattern as RegExp | undefined;
  const maxLength = (schema.maxLength as number | null) ?? 64;
  const minLength = (schema.minLength as number | null) ?? 0;
  const valid = regex
    ? fc.stringMatching(regex).filter((s) => s.length <= maxLength && s.length >= minLength)
    : fc.string({ minLength, maxLength: Math.min(maxLength, 40) });
  return fc.oneof(
    { arbitrary: valid, weight: 6 },
    { arbitrary: fc.constantFrom(...HOSTILE_STRINGS), weight: 2 },
    { arbitrary: hostile, weight: 1 },
  );
}

/** An arbitrary for the values a schema describes, with some hostile ones mixed in. */
export function arbitraryOf(
  schema: z.ZodType,
  overrides: Record<string, fc.Arbitrary<unknown>> = {},
): fc.Arbitrary<unknown> {
  const s = schema as Any;
  const def = s._zod.def;
  switch (def.type) {
    case 'number':
      return numberArb(s);
    case 'string':
      return stringArb(s);
    case 'boolean':
      return fc.oneof(fc.boolean(), hostile);
    case 'literal':
      return fc.oneof(
        { arbitrary: fc.constantFrom(...(def.values as unknown[])), weight: 8 },
        { arbitrary: hostile, weight: 1 },
      );
    case 'enum':
      return fc.oneof(
        { arbitrary: fc.constantFrom(...Object.values(def.entries as Record<string, unknown>)), weight: 6 },
        { arbitrary: hostile, weight: 1 },
      );
    case 'optional':
    case 'default':
      return fc.option(arbitraryOf(def.innerType, overrides), { nil: undefined, freq: 4 });
    case 'pipe':
      return arbitraryOf(def.in.type === 'transform' ? def.out : def.in, overrides);
    case 'array': {
      const max = Math.min((s.maxLength as number | null) ?? 10, 10);
      return fc.oneof(
        {
          arbitrary: fc.array(arbitraryOf(def.element, overrides), { minLength: 1, maxLength: max }),
          weight: 8,
        },
        { arbitrary: hostile, weight: 1 },
      );
    }
    case 'record':
      return fc.oneof(
        {
          arbitrary: fc.dictionary(
            fc.oneof(fc.constantFrom('1', '2', '4', '8', '16'), fc.string({ maxLength: 4 })),
            arbitraryOf(def.valueType, overrides),
            { maxKeys: 6 },
          ),
          weight: 8,
        },
        { arbitrary: hostile, weight: 1 },
      );
    case 'object': {
      const shape = def.shape as Record<string, Any>;
      const keys = Object.keys(shape);
      const required = keys.filter((k) => !['optional', 'default'].includes(shape[k]!._zod.def.type));
      const fields = Object.fromEntries(
        keys.map((k) => [k, overrides[k] ?? arbitraryOf(shape[k]!, overrides)]),
      );
      const record = fc.record(fields, { requiredKeys: required as never });
      const withExtra = fc
        .tuple(record, fc.string({ minLength: 1, maxLength: 8 }), hostile)
        .map(([r, k, v]) => ({ ...(r as object), [k]: v }));
      const missing = fc.tuple(record, fc.constantFrom(...(keys.length ? keys : ['x']))).map(([r, k]) => {
        const copy = { ...(r as Record<string, unknown>) };
        delete copy[k];
        return copy;
      });
      return fc.oneof(
        { arbitrary: record, weight: 8 },
        { arbitrary: withExtra, weight: 1 },
        { arbitrary: missing, weight: 1 },
        { arbitrary: hostile, weight: 1 },
      );
    }
    default:
      return hostile;
  }
}
