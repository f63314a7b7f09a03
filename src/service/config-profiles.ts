import type { ClassProfile } from '../core/profile.ts';

/** How an operator gives the profiles file, for the line that names it. */
const PROFILES_SETTING = 'profiles in the config file, BOA_PROFILES or --profiles';

/**
 * The profiles file seeds the classes of a new data dir only; later the stored classes win (what
 * `boa classes put` and `delete` changed). A file edited or replaced since was ignored without a word
 * (found in an upgrade trial): the line saying which of its classes are not used, or null when it
 * matches the stored classes or none was configured (the embedded default is not the operator's choice).
 */
export function ignoredProfiles(
  file: string | undefined,
  fileClasses: readonly ClassProfile[],
  stored: readonly ClassProfile[],
): string | null {
  if (file === undefined) return null;
  const storedByName = new Map(stored.map((c) => [c.name, canonical(c)]));
  const inFile = new Set(fileClasses.map((c) => c.name));
  const added = fileClasses.filter((c) => !storedByName.has(c.name)).map((c) => c.name);
  const changed = fileClasses
    .filter((c) => storedByName.has(c.name) && storedByName.get(c.name) !== canonical(c))
    .map((c) => c.name);
  const missing = stored.filter((c) => !inFile.has(c.name)).map((c) => c.name);
  if (added.length + changed.length + missing.length === 0) return null;
  const parts = [
    added.length > 0 ? `not stored: ${added.join(', ')}` : '',
    changed.length > 0 ? `stored with another profile: ${changed.join(', ')}` : '',
    missing.length > 0 ? `stored but not in the file: ${missing.join(', ')}` : '',
  ].filter(Boolean);
  return (
    `the profiles file ${file} (${PROFILES_SETTING}) differs from the data dir's classes (${parts.join('; ')}) ` +
    'and is ignored: it seeds the classes at the first start only, the stored ones are used. ' +
    'Change them with `boa classes put <class.json>` and `boa classes delete <name>`'
  );
}

/** JSON with sorted keys: a stored profile read back may list its fields in another order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}
