import type { ClassProfile } from '../core/profile.ts';
import { entriesOf, tooManyEntries } from '../core/profile-entries.ts';
import { notFound, ServiceError } from './errors.ts';
import { persistWorkSamples } from './progress.ts';
import type { BoaService } from './service.ts';
import type { ClassState } from './state.ts';
import { judgeWorkSample } from './trust.ts';
import { sampleWork, underTable, type WorkSample } from './work-samples.ts';

/** Refuses a class the stored ones leave no room for (the speedup-table bound), as a put or its validation. */
export function checkClassFits(svc: BoaService, profile: ClassProfile): void {
  const others = [...svc.state.classes.values()].map((c) => c.profile).filter((c) => c.name !== profile.name);
  const tooMany = tooManyEntries([...others, profile]);
  if (tooMany) {
    throw new ServiceError(
      422,
      'profiles_too_large',
      `with class ${profile.name} (${entriesOf(profile)} speedup entries), ${tooMany}`,
      'profile',
    );
  }
}

export function putClass(svc: BoaService, profile: ClassProfile, priorRatePerHour: number | undefined): void {
  checkClassFits(svc, profile);
  // A job in an epoch the new profile lacks could report no progress (progress.ts): refused.
  const epochs = profile.epochs.length;
  const beyond = activeJobs(svc, profile.name).filter((j) => j.statEpoch >= epochs);
  if (beyond.length > 0) {
    throw new ServiceError(
      409,
      'class_in_use',
      // Epochs counted from 1 as `boa jobs list` shows them, with the API's 0-based statEpoch beside.
      `class ${profile.name} has ${beyond.length} active job(s) in a statistical epoch the new profile's ` +
        `${epochs} lack: ${listed(beyond.map((j) => `job ${j.id} in epoch ${j.statEpoch + 1} (statEpoch ${j.statEpoch})`))}; ` +
        'cancel or finish them first, or keep their epochs in the profile',
      'profile',
    );
  }
  const now = svc.deps.clock.now();
  const existing = svc.state.classes.get(profile.name);
  const prior =
    priorRatePerHour ?? existing?.priorRatePerHour ?? svc.deps.config.priorRates[profile.name] ?? 0;
  const sameShape = existing && existing.profile.epochs.length === profile.epochs.length;
  const entry = {
    profile,
    priorRatePerHour: prior,
    workSamples: sameShape ? rejudged(svc, existing, profile) : profile.epochs.map(() => []),
  };
  // The class and its samples in one transaction: a restart must not bring back the old shape's.
  svc.deps.repo.transaction(() => {
    svc.deps.repo.putClass(profile, prior, now);
    persistWorkSamples(svc, now, new Map(svc.state.classes).set(profile.name, entry));
  });
  svc.state.classes.set(profile.name, entry);
  // The load needs' key (a replaced profile or prior keeps the class count).
  svc.state.classesChanged += 1;
  svc.deps.logger.info(
    { event: 'class_put', name: profile.name, epochs: profile.epochs.length },
    'class saved',
  );
  void svc.planner.request('profile');
}

/** Deletes a class no active job belongs to; the last class stays (a restart would reseed defaults). */
export function deleteClass(svc: BoaService, name: string): void {
  const s = svc.state;
  if (!s.classes.has(name)) throw notFound(`class ${name}`);
  const active = activeJobs(svc, name);
  if (active.length > 0) {
    throw new ServiceError(
      409,
      'class_in_use',
      `class ${name} has ${active.length} active job(s) (${listed(active.map((j) => String(j.id)))}); ` +
        'cancel or finish them first',
      'name',
    );
  }
  if (s.classes.size === 1) {
    throw new ServiceError(
      409,
      'last_class',
      `class ${name} is the only class; put another one first`,
      'name',
    );
  }
  // Its samples go with it: a class re-created under the name starts without them.
  const remaining = new Map(s.classes);
  remaining.delete(name);
  svc.deps.repo.transaction(() => {
    svc.deps.repo.deleteClass(name);
    persistWorkSamples(svc, svc.deps.clock.now(), remaining);
  });
  s.classes.delete(name);
  s.classesChanged += 1;
  svc.deps.logger.info({ event: 'class_deleted', name }, 'class deleted');
  void svc.planner.request('profile');
}

/**
 * A kept class's samples under its new profile: each is read against the new speedup table at its
 * width (work-samples.ts underTable), and where an epoch's work changed they are judged again
 * (trust.ts): the impossible ones are dropped and logged, the others kept as measured, and the plan
 * clamps them to the new profile's bounds.
 */
function rejudged(svc: BoaService, existing: ClassState, profile: ClassProfile): WorkSample[][] {
  return existing.workSamples.map((stored, j) => {
    const [was, is] = [existing.profile.epochs[j], profile.epochs[j]];
    if (!was || !is) return stored;
    const samples = stored.map((sample) => underTable(sample, was.speedup, is.speedup));
    if (was.workSeconds === is.workSeconds) return samples;
    const kept: WorkSample[] = [];
    for (const sample of samples) {
      const verdict = judgeWorkSample(is.workSeconds, sampleWork(sample));
      if (verdict.use) kept.push(sample);
      else
        svc.deps.logger.warn(
          {
            event: 'work_sample_dropped',
            class: profile.name,
            statEpoch: j,
            workSeconds: sampleWork(sample),
            reason: verdict.reason,
          },
          'work sample ignored: the class profile changed',
        );
    }
    return kept;
  });
}

/** The class's waiting and running jobs. */
function activeJobs(svc: BoaService, name: string) {
  return [...svc.state.jobs.values()].filter(
    (j) => j.className === name && (j.state === 'waiting' || j.state === 'running'),
  );
}

/** The first five, and "..." for more. */
const listed = (items: string[]) => `${items.slice(0, 5).join(', ')}${items.length > 5 ? ', ...' : ''}`;
