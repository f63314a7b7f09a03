import { z } from 'zod';
import { issueText } from './issue-text.ts';
import { tooManyEntries } from './profile-entries.ts';

export const MAX_WIDTH = 1024;
/** Bounds that keep one profile from making every budget infeasible or the planner's tables huge. */
export const MAX_EPOCHS = 1000;
export const MAX_EPOCH_WORK_SECONDS = 1e8;

/**
 * The public, versioned job-class profile format (version 1).
 * Speedups are as measured: they may dip across node boundaries and may be slightly superlinear;
 * the calculators take hulls themselves, so the file keeps the truth.
 */
/** How far past linear a measured speedup may be (slightly superlinear ones are real: caches). */
export const SUPERLINEAR_LIMIT = 2;

const speedupTable = z
  .record(
    z.string(),
    z
      .number()
      .finite()
      .positive('speedups must be positive numbers')
      .max(2 * MAX_WIDTH, `speedups are at most ${2 * MAX_WIDTH}`),
  )
  .superRefine((table, ctx) => {
    const one = table['1'];
    if (one === undefined) {
      ctx.addIssue({ code: 'custom', message: 'the speedup table must list width "1" (value 1)' });
    } else if (Math.abs(one - 1) > 1e-9) {
      ctx.addIssue({ code: 'custom', path: ['1'], message: `speedup at 1 GPU must be 1, got ${one}` });
    }
    for (const key of Object.keys(table)) {
      if (!/^[1-9][0-9]*$/.test(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'speedup keys must be positive integer GPU counts, like "1", "2", "4"',
        });
      } else if (Number(key) > MAX_WIDTH) {
        ctx.addIssue({ code: 'custom', path: [key], message: `widths are at most ${MAX_WIDTH} GPUs` });
      } else if ((table[key] as number) > SUPERLINEAR_LIMIT * Number(key)) {
        // Slightly superlinear is measured (caches); far beyond is a typo or a wrong unit, and the
        // plan would give jobs those widths as if they paid for themselves.
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message:
            `speedup at ${key} GPUs is ${table[key]}, more than ${SUPERLINEAR_LIMIT}x linear ` +
            `(${SUPERLINEAR_LIMIT * Number(key)}): a speedup is measured against 1 GPU, at most about the GPU count`,
        });
      }
    }
  });

const epochSchema = z.strictObject({
  workSeconds: z
    .number()
    .finite()
    .positive('workSeconds must be a positive number of seconds on 1 GPU')
    .max(MAX_EPOCH_WORK_SECONDS, `workSeconds is at most ${MAX_EPOCH_WORK_SECONDS} (about 3 GPU-years)`),
  speedup: speedupTable,
});

const classSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'class names are 1-64 letters, digits, _ . -'),
  weight: z.number().finite().positive('weight must be a positive number').max(1e6).default(1),
  rescaleSeconds: z.number().finite().nonnegative('rescaleSeconds must be >= 0').max(86_400),
  epochs: z
    .array(epochSchema)
    .min(1, 'a class needs at least one statistical epoch')
    .max(MAX_EPOCHS, `a class has at most ${MAX_EPOCHS} statistical epochs`),
});

export const profileFileSchema = z
  .strictObject({
    version: z.literal(1, 'version must be 1 (the only profile format version)'),
    instanceType: z.string().min(1),
    gpusPerNode: z.number().int().positive(),
    classes: z.array(classSchema).min(1, 'a profile file needs at least one class'),
    source: z.string().optional(),
  })
  .superRefine((file, ctx) => {
    const seen = new Set<string>();
    file.classes.forEach((cls, i) => {
      if (seen.has(cls.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['classes', i, 'name'],
          message: `duplicate class "${cls.name}"`,
        });
      }
      seen.add(cls.name);
    });
    // The bound `boa classes put` keeps: a file past it had every plan take minutes (found in review).
    const tooMany = tooManyEntries(file.classes);
    if (tooMany) ctx.addIssue({ code: 'custom', path: ['classes'], message: tooMany });
  });

export type ProfileFile = z.output<typeof profileFileSchema>;
export type ClassProfile = ProfileFile['classes'][number];
export type EpochProfile = ClassProfile['epochs'][number];

export class ProfileError extends Error {
  override name = 'ProfileError';
}

/** Validates parsed JSON as a profile file; the error names the first bad field by its path. */
export function parseProfileFile(json: unknown, origin = 'profile'): ProfileFile {
  const result = profileFileSchema.safeParse(json);
  if (result.success) return result.data;
  // As for one class (parseClassProfile): a class's misspelt field first, with the fields it has.
  const unknown = result.error.issues.find(
    (i) => i.code === 'unrecognized_keys' && i.path[0] === 'classes' && typeof i.path[1] === 'number',
  );
  if (unknown?.code === 'unrecognized_keys') {
    const where = `${origin} ${formatPath(unknown.path.slice(0, 2))}`;
    throw new ProfileError(
      `invalid profile: ${where}: ${unknownFields(unknown.path.slice(2), unknown.keys)}`,
    );
  }
  const lines = result.error.issues
    .slice(0, 5)
    .map((issue) => `${origin} ${formatPath(issue.path)}${issueText(issue)}`);
  throw new ProfileError(`invalid profile: ${lines.join('; ')}`);
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(top level)';
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`))
    .join('');
}

/** Listed width -> measured speedup of one statistical epoch. */
export type SpeedupTable = Readonly<Record<string, number>>;

/** The table of a class's statistical epoch (its last for a job past them); undefined: no class. */
export function epochSpeedups(
  profile: ClassProfile | undefined,
  statEpoch: number,
): SpeedupTable | undefined {
  const epochs = profile?.epochs;
  if (!epochs || epochs.length === 0) return undefined;
  return epochs[Math.min(statEpoch, epochs.length - 1)]?.speedup;
}

/**
 * A job's speedup on `width` GPUs: the measured one at a listed width (not the best below it: a job on
 * a width where the measurement dips runs that slowly), the best listed width below an unlisted one.
 */
export function speedupAt(table: SpeedupTable, width: number): number {
  return table[String(width)] ?? speedupUpTo(table, width);
}

/** The best listed speedup at or below this width (1 when none is listed). */
export function speedupUpTo(table: SpeedupTable, width: number): number {
  let best = 1;
  for (const [key, speedup] of Object.entries(table)) {
    if (Number(key) <= width && speedup > best) best = speedup;
  }
  return best;
}

/** Listed widths of an epoch's speedup table, ascending. */
export function listedWidths(epoch: EpochProfile): number[] {
  return Object.keys(epoch.speedup)
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * Validates one class profile as an operator submits it, with the same rules as the file format:
 * measured speedups may dip as widths grow (across node boundaries). The paper's calculator plans on each
 * table's monotone concave hull; the exact one uses a width under it only to hold that width across
 * epochs where a rescale would cost more (docs/model.md). Dips are reported by speedupDips.
 */
export function parseClassProfile(json: unknown): ClassProfile {
  const result = classSchema.safeParse(json);
  if (!result.success) {
    const { issues } = result.error;
    // A misspelt field is said first, with the fields allowed there: its "workSeconds is missing", or
    // "(top level): Unrecognized key", named neither (found in a newcomer trial).
    const unknown = issues.find((i) => i.code === 'unrecognized_keys');
    if (unknown)
      throw new ProfileError(`invalid class profile: ${unknownFields(unknown.path, unknown.keys)}`);
    const issue = issues[0];
    throw new ProfileError(
      `invalid class profile: ${formatPath(issue?.path ?? [])}${issue ? issueText(issue) : ''}`,
    );
  }
  return result.data;
}

/** Unknown fields of a class object or of one of its epochs, and the fields that object has. */
function unknownFields(path: readonly PropertyKey[], keys: readonly string[]): string {
  const allowed = Object.keys(path.length === 0 ? classSchema.shape : epochSchema.shape).join(', ');
  const named = keys.map((k) => JSON.stringify(k)).join(', ');
  const where = path.length === 0 ? 'a class object' : `${formatPath(path)}, a statistical epoch,`;
  return `${where} has no field ${named}; its fields are ${allowed}`;
}

/** Every place a class's speedup falls from one listed width to the next, for the operator to check. */
export function speedupDips(profile: ClassProfile): string[] {
  return profile.epochs.flatMap((epoch, j) => {
    const widths = listedWidths(epoch);
    return widths.slice(1).flatMap((b, i) => {
      const a = widths[i] as number;
      const [from, to] = [epoch.speedup[a] as number, epoch.speedup[b] as number];
      return to < from ? [`epochs[${j}]: speedup falls from ${from} at ${a} GPUs to ${to} at ${b} GPUs`] : [];
    });
  });
}
