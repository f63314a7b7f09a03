import type { SpeedupTable } from '../core/profile.ts';

/**
 * One clean epoch's 1-GPU work (progress.ts recordWorkSample): its duration x the profile's speedup at
 * the width it ran at, kept with that width so the class's speedups can be learned (learned-speedups.ts),
 * and with the instance type it ran on: another type's GPUs run at another speed, so the plan reads only
 * the samples of the type configured now (onInstanceType), and keeps the others for a switch back.
 * A plain number is a sample stored before 2026-12-01, when the width was not kept: it still counts for
 * the work, at an unknown width. One without a type was stored before types were kept; the service
 * gives it the type it starts with (withInstanceType).
 */
export type WorkSample =
  number | { readonly workSeconds: number; readonly width?: number; readonly instanceType?: string };

export const sampleWork = (sample: WorkSample): number =>
  typeof sample === 'number' ? sample : sample.workSeconds;

export const sampleWidth = (sample: WorkSample): number | undefined =>
  typeof sample === 'number' ? undefined : sample.width;

export const sampleInstanceType = (sample: WorkSample): string | undefined =>
  typeof sample === 'number' ? undefined : sample.instanceType;

/**
 * Whether `sample` was measured on `instanceType`. One without a type counts as the type read now, as
 * the service's start gives it (withInstanceType): the start tags every stored one, so only a sample put
 * in memory without one (tests) is left untyped.
 */
export const measuredOn = (sample: WorkSample, instanceType: string): boolean =>
  (sampleInstanceType(sample) ?? instanceType) === instanceType;

/** The samples measured on `instanceType`: those the plan reads while the node group is of it. */
export const onInstanceType = (samples: readonly WorkSample[], instanceType: string): WorkSample[] =>
  samples.filter((sample) => measuredOn(sample, instanceType));

/**
 * When the instance type samples are tagged with last changed (a start on another type), stored so a
 * second restart before an epoch begun on the old type ends still knows; undefined when it has not
 * changed since this setting was first stored. An epoch begun before it is not sampled (progress.ts).
 */
export function instanceTypeSince(
  repo: {
    getSetting<T>(key: string): T | undefined;
    putSetting(key: string, value: unknown, at: number): void;
  },
  instanceType: string,
  now: number,
): number | undefined {
  const stored = repo.getSetting<{ instanceType: string; since?: number }>(SAMPLES_TYPE_KEY);
  if (stored?.instanceType === instanceType) return stored.since;
  const since = stored === undefined ? undefined : now;
  repo.putSetting(SAMPLES_TYPE_KEY, { instanceType, ...(since === undefined ? {} : { since }) }, now);
  return since;
}

const SAMPLES_TYPE_KEY = 'samplesInstanceType';

/**
 * Every class's samples with those stored without a type given `instanceType` (the type the service
 * starts with); `changed` when any was. Samples stored before types were kept were measured on the type
 * the service ran then, which boa did not record: the first start that reads them names it.
 */
export function withInstanceType(
  all: Readonly<Record<string, WorkSample[][]>>,
  instanceType: string,
): { samples: Record<string, WorkSample[][]>; changed: boolean } {
  let changed = false;
  const tagged = (sample: WorkSample): WorkSample => {
    if (sampleInstanceType(sample) !== undefined) return sample;
    changed = true;
    return typeof sample === 'number' ? { workSeconds: sample, instanceType } : { ...sample, instanceType };
  };
  const samples = Object.fromEntries(
    Object.entries(all).map(([name, epochs]) => [name, epochs.map((epoch) => (epoch ?? []).map(tagged))]),
  );
  return { samples, changed };
}

/**
 * A sample under a replaced speedup table: its duration times the new speedup at its width, as a new
 * sample would be. Kept as it was, a table corrected to what jobs showed would be corrected again. A
 * width the new table lacks leaves the work as measured, at an unknown width.
 */
export function underTable(sample: WorkSample, before: SpeedupTable, after: SpeedupTable): WorkSample {
  const width = sampleWidth(sample);
  if (width === undefined) return sample;
  const [was, is] = [before[String(width)], after[String(width)]];
  const instanceType = sampleInstanceType(sample);
  const typed = instanceType === undefined ? {} : { instanceType };
  if (was === undefined || is === undefined)
    return instanceType === undefined ? sampleWork(sample) : { workSeconds: sampleWork(sample), ...typed };
  return was === is ? sample : { workSeconds: (sampleWork(sample) / was) * is, width, ...typed };
}

/**
 * Drops samples of `instanceType`, oldest first, from the width with the most, until at most `max` of
 * that type are kept; another type's are kept as they are (for a switch back), at most `max` each. Dropped
 * oldest first whatever the width, a corrected width's samples aged out once the plan stopped giving
 * it: the table went back to the profile's, the plan gave that width again, and the correction came
 * back three jobs later, over and over (found in review). Kept in place (the class's list).
 */
export function trimSamples(samples: WorkSample[], max: number, instanceType: string): void {
  const ofType = (sample: WorkSample) => measuredOn(sample, instanceType);
  while (samples.filter(ofType).length > max) {
    const counts = new Map<number | undefined, number>();
    for (const sample of samples.filter(ofType))
      counts.set(sampleWidth(sample), (counts.get(sampleWidth(sample)) ?? 0) + 1);
    const most = Math.max(...counts.values());
    // The oldest sample of the type at a width with the most.
    const index = samples.findIndex((sample) => ofType(sample) && counts.get(sampleWidth(sample)) === most);
    samples.splice(index, 1);
  }
}
