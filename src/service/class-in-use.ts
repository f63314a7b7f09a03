import { type ClassProfile, parseClassProfile } from '../core/profile.ts';
import { blendWork } from './estimators.ts';
import { type LearnedEpoch, learnEpoch } from './learned-speedups.ts';
import type { BoaService } from './service.ts';
import type { ClassState } from './state.ts';
import { onInstanceType, sampleInstanceType, sampleWork, type WorkSample } from './work-samples.ts';

/**
 * A class as the plan reads it: each epoch's speedups learned from its samples' widths
 * (learned-speedups.ts) and its work blended with the samples read against them. An epoch whose
 * correction the profile rules refuse (a speedup beyond 2x linear: a table near it scaled up) keeps its
 * profile's table, the others their learned ones, said once in the log; a class the rules still refuse
 * keeps every profile table.
 */
export function classInUse(svc: BoaService, cls: ClassState): ClassInUse {
  const kept = lastWorkedOut.get(cls);
  if (kept && sameInputs(kept, cls)) return kept.result;
  const result = workOut(svc, cls);
  lastWorkedOut.set(cls, {
    profile: cls.profile,
    samples: Array.from(cls.workSamples, (epoch) => [...(epoch ?? [])]),
    result,
  });
  return result;
}

type ClassInUse = { profile: ClassProfile; epochs: LearnedEpoch[] };

/**
 * Each class's last result and what it was worked out from: the tick reads every class two or three
 * times (the ceiling's narrowing, the idle fill, the plan), and learning its epochs' speedups was a
 * tenth of the decision (bench:tick). Samples are pushed and trimmed in place, so they are compared by
 * content (at most 50 an epoch), not by the array.
 */
const lastWorkedOut = new WeakMap<
  ClassState,
  { profile: ClassProfile; samples: WorkSample[][]; result: ClassInUse }
>();

function sameInputs(kept: { profile: ClassProfile; samples: WorkSample[][] }, cls: ClassState): boolean {
  if (kept.profile !== cls.profile || kept.samples.length !== cls.workSamples.length) return false;
  // Indexed loops, not every(): an epoch not sampled yet may be a hole (`workSamples[epoch] ??= []`).
  for (let j = 0; j < kept.samples.length; j++) {
    const before = kept.samples[j] ?? [];
    const now = cls.workSamples[j] ?? [];
    if (before.length !== now.length) return false;
    for (let i = 0; i < now.length; i++) if (before[i] !== now[i]) return false;
  }
  return true;
}

function workOut(svc: BoaService, cls: ClassState): ClassInUse {
  const { profile } = cls;
  // Only the samples measured on the instance type configured: another type's GPUs run at another speed.
  const workSamples = cls.workSamples.map((epoch) =>
    onInstanceType(epoch ?? [], svc.deps.config.instanceType),
  );
  let epochs = profile.epochs.map((e, j) => learnEpoch(e, workSamples[j] ?? []));
  let inUse = withEpochs(profile, epochs);
  const refusedEpoch = epochs.findIndex((e) => e.refused);
  if (refusedEpoch >= 0) {
    warnOnce(svc, profile.name, new Error(`epoch ${refusedEpoch}: ${epochs[refusedEpoch]!.refused}`));
  } else if (!epochs.some((e) => e.corrected)) refused.get(svc)?.delete(profile.name);
  if (epochs.some((e) => e.corrected)) {
    try {
      parseClassProfile(inUse);
      if (refusedEpoch < 0) refused.get(svc)?.delete(profile.name);
    } catch (error) {
      warnOnce(svc, profile.name, error);
      // Without widths the samples count for the work only, as before speedups were learned.
      epochs = profile.epochs.map((e, j) => learnEpoch(e, (workSamples[j] ?? []).map(sampleWork)));
      inUse = withEpochs(profile, epochs);
    }
  }
  return { profile: inUse, epochs };
}

/**
 * A class as `GET /v1/classes` shows it: its profile, and beside it the tables and work the plan reads
 * with each epoch's trusted samples by width ("unknown": stored before widths were kept).
 */
export function classView(svc: BoaService, cls: ClassState) {
  const { profile, epochs } = classInUse(svc, cls);
  const { instanceType } = svc.deps.config;
  return {
    name: cls.profile.name,
    priorRatePerHour: cls.priorRatePerHour,
    profile: cls.profile,
    inUse: {
      epochs: profile.epochs.map((e, j) => ({
        workSeconds: e.workSeconds,
        speedup: e.speedup,
        speedupLearned: epochs[j]!.corrected,
        samples: epochs[j]!.samples,
        samplesInstanceType: instanceType,
        samplesOtherInstanceTypes: otherTypes(cls.workSamples[j] ?? [], instanceType),
      })),
    },
  };
}

/** How many samples each instance type but `instanceType` has kept (read again on a switch back). */
function otherTypes(samples: readonly WorkSample[], instanceType: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const sample of samples) {
    const type = sampleInstanceType(sample);
    if (type !== undefined && type !== instanceType) counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}

function withEpochs(profile: ClassProfile, epochs: readonly LearnedEpoch[]): ClassProfile {
  return {
    ...profile,
    epochs: profile.epochs.map((e, j) => {
      const learned = epochs[j]!;
      return { workSeconds: blendWork(e.workSeconds, learned.workSamples), speedup: learned.speedup };
    }),
  };
}

/** Classes whose corrected tables were refused, logged once until they are valid again. */
const refused = new WeakMap<BoaService, Set<string>>();

function warnOnce(svc: BoaService, name: string, error: unknown): void {
  const names = refused.get(svc) ?? new Set<string>();
  refused.set(svc, names);
  if (names.has(name)) return;
  names.add(name);
  svc.deps.logger.warn(
    { event: 'learned_speedups_refused', class: name, reason: String((error as Error).message) },
    `class ${name}: the speedups learned from its jobs are not a valid table; the profile's are used`,
  );
}
