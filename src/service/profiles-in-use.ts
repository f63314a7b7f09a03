import type { ClassProfile } from '../core/profile.ts';
import { estimatedClasses } from './plan-inputs.ts';
import type { BoaService } from './service.ts';

/** Classes looked up by name, as a map of the service's classes is. */
export interface ClassProfiles {
  get(name: string): { readonly profile: ClassProfile } | undefined;
}

/**
 * The classes as the plan reads them (learned speedups, blended work), worked out on the first lookup:
 * the ceiling's narrowing and the below-budget split price GPUs by the same tables as the plan (they
 * read the profile's while the plan read corrected ones: found at merge), and most ticks look up none.
 */
export function profilesInUse(svc: BoaService): ClassProfiles {
  let byName: Map<string, { profile: ClassProfile }> | undefined;
  return {
    get: (name) =>
      (byName ??= new Map(estimatedClasses(svc).map((profile) => [profile.name, { profile }]))).get(name),
  };
}
