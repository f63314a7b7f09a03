import type { ClassProfile } from './profile.ts';

/**
 * The most speedup-table entries (widths x statistical epochs, over every class) a service keeps and a
 * profiles file may hold: plans, the frontier and the load's minimum grow with them (in worker threads:
 * at this size a frontier of 195 epochs x 1024 widths took 7.6 s, the load's minimum 0.4 s, measured
 * 2026-12-06; a file of 1000 epochs x 1024 widths took minutes a plan).
 */
export const MAX_PROFILE_ENTRIES = 200_000;

/** A class's speedup-table entries: its listed widths summed over its statistical epochs. */
export const entriesOf = (profile: ClassProfile): number =>
  profile.epochs.reduce((sum, epoch) => sum + Object.keys(epoch.speedup).length, 0);

/** Why these classes are more entries than are kept (naming the largest classes), or null when within. */
export function tooManyEntries(classes: readonly ClassProfile[]): string | null {
  const sized = classes.map((c) => ({ name: c.name, epochs: c.epochs.length, entries: entriesOf(c) }));
  const total = sized.reduce((sum, c) => sum + c.entries, 0);
  if (total <= MAX_PROFILE_ENTRIES) return null;
  const largest = sized
    .sort((a, b) => b.entries - a.entries)
    .slice(0, 3)
    .map((c) => `${c.name}: ${c.entries} over ${c.epochs} epochs`)
    .join(', ');
  return (
    `the classes' speedup tables would hold ${total} entries (widths x statistical epochs, over all ` +
    `classes; the largest ${largest}); at most ${MAX_PROFILE_ENTRIES} are kept, so that plans, the ` +
    "frontier and the budget's minimum stay quick to compute: list only the widths a job may be given, " +
    'or fewer statistical epochs'
  );
}
